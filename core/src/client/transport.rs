//! Opening a byte stream to a broker: TCP with no-delay and sized socket
//! buffers, optionally wrapped in TLS 1.2+ (rustls, custom CA, optional
//! client certificate).

use crate::config::{ClientConfig, TlsConfig};
use crate::error::{Error, ErrorKind, Result};
use std::io::BufReader;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{lookup_host, TcpSocket, TcpStream};
use tokio_rustls::rustls;

/// A connected byte stream (plain TCP or TLS).
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// Connects to `addr` (`host:port`) as `config` says. The caller applies the
/// connect timeout around this call.
pub async fn open(addr: &str, config: &ClientConfig) -> Result<Box<dyn Io>> {
    let tcp = connect_tcp(addr, config).await?;
    match &config.tls {
        None => Ok(Box::new(tcp)),
        Some(tls) => {
            let connector = tokio_rustls::TlsConnector::from(Arc::new(tls_client_config(tls)?));
            let host = tls
                .server_name
                .clone()
                .unwrap_or_else(|| host_of(addr).to_owned());
            let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|_| {
                Error::invalid_argument(format!(
                    "TLS server name {host:?} is not a valid DNS name or IP"
                ))
            })?;
            let stream = connector
                .connect(name, tcp)
                .await
                .map_err(|e| tls_failure(addr, &host, &e))?;
            Ok(Box::new(stream))
        }
    }
}

/// The host part of `host:port` (brackets of an IPv6 literal removed).
pub(crate) fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

async fn connect_tcp(addr: &str, config: &ClientConfig) -> Result<TcpStream> {
    let addrs = lookup_host(addr)
        .await
        .map_err(|e| Error::io(format!("cannot resolve {addr}: {e}")))?;
    let mut last = Error::io(format!("{addr} resolved to no address"));
    for sa in addrs {
        let socket = if sa.is_ipv4() {
            TcpSocket::new_v4()
        } else {
            TcpSocket::new_v6()
        }?;
        // Larger buffers keep big batches flowing; best effort, as some
        // systems cap them.
        let _ = socket.set_send_buffer_size(config.socket_buffer_bytes as u32);
        let _ = socket.set_recv_buffer_size(config.socket_buffer_bytes as u32);
        match socket.connect(sa).await {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(e) => last = Error::io(format!("connect to {addr} ({sa}) failed: {e}")),
        }
    }
    Err(last)
}

fn read_pem(path: &std::path::Path) -> Result<BufReader<std::fs::File>> {
    std::fs::File::open(path)
        .map(BufReader::new)
        .map_err(|e| Error::invalid_argument(format!("cannot read {}: {e}", path.display())))
}

/// Builds the rustls client configuration: the CA file's roots, TLS 1.2 and
/// 1.3 only, and a client certificate when one is configured.
fn tls_client_config(tls: &TlsConfig) -> Result<rustls::ClientConfig> {
    let ca = tls.ca_file.as_ref().ok_or_else(|| {
        Error::invalid_argument("TLS needs tls_ca_file: the CA certificates to trust")
    })?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut read_pem(ca)?) {
        let cert = cert.map_err(|e| {
            Error::invalid_argument(format!("bad certificate in {}: {e}", ca.display()))
        })?;
        roots.add(cert).map_err(|e| {
            Error::invalid_argument(format!("unusable CA certificate in {}: {e}", ca.display()))
        })?;
    }
    if roots.is_empty() {
        return Err(Error::invalid_argument(format!(
            "{} holds no certificates",
            ca.display()
        )));
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
    .map_err(|e| Error::internal(format!("TLS setup failed: {e}")))?
    .with_root_certificates(roots);
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            let chain = rustls_pemfile::certs(&mut read_pem(cert)?)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| {
                    Error::invalid_argument(format!("bad certificate in {}: {e}", cert.display()))
                })?;
            let key = rustls_pemfile::private_key(&mut read_pem(key)?)
                .map_err(|e| Error::invalid_argument(format!("bad key in {}: {e}", key.display())))?
                .ok_or_else(|| {
                    Error::invalid_argument(format!("{} holds no private key", key.display()))
                })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::invalid_argument(format!("client certificate rejected: {e}")))
        }
        _ => Ok(builder.with_no_client_auth()),
    }
}

/// Why a TLS handshake failed, as the `reason` field of a
/// `tls_handshake_failed` error, with the sentence that explains it.
fn tls_reason(e: &rustls::Error, host: &str) -> (&'static str, String) {
    use rustls::{AlertDescription as Alert, CertificateError as Cert};
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            Cert::UnknownIssuer | Cert::BadSignature | Cert::UnknownRevocationStatus => (
                "unknown_ca",
                "the broker's certificate is not signed by a CA in tls_ca_file".to_owned(),
            ),
            Cert::NotValidForName | Cert::NotValidForNameContext { .. } => (
                "name_mismatch",
                format!(
                    "the broker's certificate is not valid for {host:?} \
                     (set tls_server_name to a name it carries)"
                ),
            ),
            Cert::Expired | Cert::ExpiredContext { .. } | Cert::NotValidYet => (
                "certificate_expired",
                "the broker's certificate is expired or not yet valid".to_owned(),
            ),
            _ => (
                "handshake",
                format!("the broker's certificate is unusable: {e}"),
            ),
        },
        // The broker verified our certificate and said no (or wanted one).
        rustls::Error::AlertReceived(
            Alert::CertificateRequired
            | Alert::BadCertificate
            | Alert::UnknownCA
            | Alert::CertificateUnknown
            | Alert::CertificateRevoked
            | Alert::CertificateExpired
            | Alert::UnsupportedCertificate
            | Alert::AccessDenied,
        ) => (
            "client_certificate_refused",
            format!(
                "the broker refused the client certificate ({e}); \
                 mutual TLS needs tls_cert_file and tls_key_file signed by the broker's client CA"
            ),
        ),
        rustls::Error::InvalidMessage(_) => (
            "not_tls",
            "the peer does not speak TLS: is this the broker's plain listener?".to_owned(),
        ),
        _ => ("handshake", e.to_string()),
    }
}

/// The error of a failed TLS handshake (or of the alert that ends one,
/// which TLS 1.3 delivers on the first read after it). An I/O failure
/// that carries no TLS error stays an `io` error: the connection broke,
/// which a retry may fix. A peer that closes mid-handshake gets a hint,
/// since a plain listener does exactly that.
pub(crate) fn tls_failure(addr: &str, host: &str, e: &std::io::Error) -> Error {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(tls) => {
            let (reason, why) = tls_reason(tls, host);
            Error::new(
                ErrorKind::Tls,
                format!("TLS handshake with {addr} failed: {why}"),
            )
            .with_field("reason", reason)
        }
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => Error::io(format!(
            "{addr} closed the connection during the TLS handshake \
             (is it a TLS listener? a plain listener closes on a TLS hello)"
        )),
        None => Error::io(format!("TLS handshake with {addr} failed: {e}")),
    }
}

/// The TLS error inside a read failure, when there is one.
pub(crate) fn tls_error_in(e: &std::io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
}
