//! The TLS listener's configuration: certificate, key and optional client
//! CA loaded from PEM files, and reloaded on SIGHUP.
//!
//! rustls with the ring provider, TLS 1.2 and 1.3 only. A reload builds a
//! complete new acceptor first and swaps it in only when that succeeded, so
//! a broken file never takes the listener down; open connections keep the
//! configuration they were accepted with.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::{Arc, RwLock};

use tokio_rustls::rustls::crypto::ring::default_provider;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::version::{TLS12, TLS13};
use tokio_rustls::rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use tokio_rustls::TlsAcceptor;
use tracing::{error, info};

use crate::config::TlsConfig;

/// The acceptor new TLS connections use, replaceable at run time.
pub struct TlsReloader {
    files: TlsConfig,
    current: RwLock<TlsAcceptor>,
}

impl std::fmt::Debug for TlsReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsReloader")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

impl TlsReloader {
    /// Loads the files; the error says which file and what is wrong.
    pub fn new(files: TlsConfig) -> Result<TlsReloader, String> {
        let acceptor = load(&files)?;
        Ok(TlsReloader {
            files,
            current: RwLock::new(acceptor),
        })
    }

    /// The acceptor for a connection accepted now.
    pub fn acceptor(&self) -> TlsAcceptor {
        // A poisoned lock still holds a complete acceptor.
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Re-reads the files. On failure the previous configuration stays
    /// and the reason is logged at `error`.
    pub fn reload(&self) -> Result<(), String> {
        match load(&self.files) {
            Ok(acceptor) => {
                *self.current.write().unwrap_or_else(|e| e.into_inner()) = acceptor;
                info!("TLS configuration reloaded");
                Ok(())
            }
            Err(e) => {
                error!(error = %e, "TLS reload failed; keeping the previous configuration");
                Err(e)
            }
        }
    }
}

/// Builds an acceptor from the three files.
fn load(files: &TlsConfig) -> Result<TlsAcceptor, String> {
    let client_ca = files
        .client_ca_file
        .as_deref()
        .map(|path| PemFile::new("tls_client_ca_file", path));
    acceptor(
        PemFile::new("tls_cert_file", &files.cert_file),
        PemFile::new("tls_key_file", &files.key_file),
        client_ca,
    )
}

/// A PEM file and the setting that names it (for error messages).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PemFile<'a> {
    /// The setting, e.g. `tls_cert_file`.
    pub setting: &'a str,
    /// The file.
    pub path: &'a Path,
}

impl<'a> PemFile<'a> {
    /// `path` as given by `setting`.
    pub(crate) fn new(setting: &'a str, path: &'a Path) -> Self {
        PemFile { setting, path }
    }
}

/// The crypto provider of every TLS configuration the broker builds.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(default_provider())
}

/// The protocol versions every TLS configuration of the broker allows.
pub(crate) const VERSIONS: &[&SupportedProtocolVersion] = &[&TLS13, &TLS12];

/// A server acceptor presenting `cert`/`key`; with `client_ca` it requires
/// a client certificate signed by one of its CAs (mutual TLS).
pub(crate) fn acceptor(
    cert: PemFile<'_>,
    key: PemFile<'_>,
    client_ca: Option<PemFile<'_>>,
) -> Result<TlsAcceptor, String> {
    let certs = read_certs(cert)?;
    let private = read_key(key)?;
    let provider = provider();
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(VERSIONS)
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(read_roots(ca)?, provider)
                .build()
                .map_err(|e| format!("{} {}: {e}", ca.setting, ca.path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(certs, private).map_err(|e| {
        format!(
            "{} {} does not fit {} {}: {e}",
            key.setting,
            key.path.display(),
            cert.setting,
            cert.path.display()
        )
    })?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The CA certificates of a PEM file as trust roots; at least one.
pub(crate) fn read_roots(file: PemFile<'_>) -> Result<Arc<RootCertStore>, String> {
    let mut roots = RootCertStore::empty();
    for cert in read_certs(file)? {
        roots
            .add(cert)
            .map_err(|e| format!("{} {}: unusable CA: {e}", file.setting, file.path.display()))?;
    }
    Ok(Arc::new(roots))
}

fn open(file: PemFile<'_>) -> Result<BufReader<File>, String> {
    File::open(file.path)
        .map(BufReader::new)
        .map_err(|e| format!("cannot read {} {}: {e}", file.setting, file.path.display()))
}

/// Every certificate of a PEM file; at least one.
pub(crate) fn read_certs(file: PemFile<'_>) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = rustls_pemfile::certs(&mut open(file)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} {}: bad PEM: {e}", file.setting, file.path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{} {}: no PEM certificate found",
            file.setting,
            file.path.display()
        ));
    }
    Ok(certs)
}

/// The first private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
pub(crate) fn read_key(file: PemFile<'_>) -> Result<PrivateKeyDer<'static>, String> {
    rustls_pemfile::private_key(&mut open(file)?)
        .map_err(|e| format!("{} {}: bad PEM: {e}", file.setting, file.path.display()))?
        .ok_or_else(|| {
            format!(
                "{} {}: no PEM private key found",
                file.setting,
                file.path.display()
            )
        })
}
