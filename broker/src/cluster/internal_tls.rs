//! Mutual TLS on the cluster listener (`internal_use_tls`): the acceptor
//! that admits only peers presenting a certificate signed by
//! `internal_tls_ca_path`, and the connector the peer pool dials with (the
//! same certificate as client certificate, the same CA as trust).
//!
//! The files are read at startup, where a bad one is an
//! [`InternalTlsError`] that stops the broker before it joins anything,
//! and again on SIGHUP ([`InternalTls::reload`]), where a bad one keeps the
//! previous configuration. Connections made after a reload use the new
//! files; open ones keep theirs.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::ClientConfig;
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tracing::{error, info};

use crate::server::tls::{self, PemFile};

/// The three PEM files of the cluster listener's mutual TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalTlsFiles {
    /// `internal_tls_cert_path`: this broker's certificate chain, presented
    /// both as server (to dialing peers) and as client (when dialing).
    pub cert_path: PathBuf,
    /// `internal_tls_key_path`: its private key.
    pub key_path: PathBuf,
    /// `internal_tls_ca_path`: the CA(s) that sign every member's certificate.
    pub ca_path: PathBuf,
}

/// The internal TLS files could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("internal TLS: {0}")]
pub struct InternalTlsError(pub String);

/// Both sides of the cluster listener's mutual TLS, built from
/// [`InternalTlsFiles`]. Clones share one configuration, which
/// [`reload`](Self::reload) replaces for all of them.
#[derive(Clone)]
pub struct InternalTls {
    files: InternalTlsFiles,
    current: Arc<RwLock<Sides>>,
}

/// The acceptor and the connector of one reading of the files.
#[derive(Clone)]
struct Sides {
    acceptor: TlsAcceptor,
    connector: TlsConnector,
}

impl std::fmt::Debug for InternalTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InternalTls")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl InternalTls {
    /// Reads the files and builds the acceptor and the connector.
    pub fn load(files: &InternalTlsFiles) -> Result<InternalTls, InternalTlsError> {
        Ok(InternalTls {
            files: files.clone(),
            current: Arc::new(RwLock::new(build(files)?)),
        })
    }

    /// Reads the files again (SIGHUP). On failure the previous
    /// configuration stays and the reason is logged at `error`.
    pub fn reload(&self) -> Result<(), InternalTlsError> {
        match build(&self.files) {
            Ok(sides) => {
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = sides;
                info!("internal TLS configuration reloaded");
                Ok(())
            }
            Err(e) => {
                error!(error = %e, "internal TLS reload failed; keeping the previous configuration");
                Err(e)
            }
        }
    }

    fn sides(&self) -> Sides {
        // A poisoned lock still holds a complete configuration.
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The server side for a connection accepted now: requires a client
    /// certificate signed by the CA.
    pub fn acceptor(&self) -> TlsAcceptor {
        self.sides().acceptor
    }

    /// The client side for a connection made now: presents this broker's
    /// certificate, trusts the CA.
    pub fn connector(&self) -> TlsConnector {
        self.sides().connector
    }
}

/// Builds both sides from the files.
fn build(files: &InternalTlsFiles) -> Result<Sides, InternalTlsError> {
    let cert = PemFile::new("internal_tls_cert_path", &files.cert_path);
    let key = PemFile::new("internal_tls_key_path", &files.key_path);
    let ca = PemFile::new("internal_tls_ca_path", &files.ca_path);
    let acceptor = tls::acceptor(cert, key, Some(ca)).map_err(InternalTlsError)?;
    let client = ClientConfig::builder_with_provider(tls::provider())
        .with_protocol_versions(tls::VERSIONS)
        .map_err(|e| InternalTlsError(format!("TLS setup failed: {e}")))?
        .with_root_certificates(tls::read_roots(ca).map_err(InternalTlsError)?)
        .with_client_auth_cert(
            tls::read_certs(cert).map_err(InternalTlsError)?,
            tls::read_key(key).map_err(InternalTlsError)?,
        )
        .map_err(|e| {
            InternalTlsError(format!(
                "internal_tls_key_path {} does not fit internal_tls_cert_path {}: {e}",
                files.key_path.display(),
                files.cert_path.display()
            ))
        })?;
    Ok(Sides {
        acceptor,
        connector: TlsConnector::from(Arc::new(client)),
    })
}

/// The name a peer at `addr` (`host:port`, `[v6]:port`) must hold in its
/// certificate: its host, a DNS name or an IP address.
pub fn server_name(addr: &str) -> Result<ServerName<'static>, String> {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_owned())
        .map_err(|e| format!("{host:?} is not a TLS server name: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_are_the_peer_hosts() {
        assert!(matches!(
            server_name("127.0.0.1:7001").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("[::1]:7001").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(
            server_name("broker-1.example:7001").unwrap(),
            ServerName::DnsName(_)
        ));
        assert!(server_name("bad host:1").is_err());
    }

    #[test]
    fn a_missing_file_is_a_typed_error_naming_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let files = InternalTlsFiles {
            cert_path: dir.path().join("nope.pem"),
            key_path: dir.path().join("nope.key"),
            ca_path: dir.path().join("ca.pem"),
        };
        let err = InternalTls::load(&files).unwrap_err();
        assert!(err.0.contains("internal_tls_cert_path"), "{err}");
        std::fs::write(&files.cert_path, "not PEM").unwrap();
        let err = InternalTls::load(&files).unwrap_err();
        assert!(err.0.contains("internal_tls_cert_path"), "{err}");
    }
}
