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
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::version::{TLS12, TLS13};
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
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
    let certs = read_certs(&files.cert_file, "tls_cert_file")?;
    let key = read_key(&files.key_file)?;
    let provider = Arc::new(default_provider());
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&TLS13, &TLS12])
        .map_err(|e| format!("TLS setup failed: {e}"))?;
    let builder = match &files.client_ca_file {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for cert in read_certs(path, "tls_client_ca_file")? {
                roots.add(cert).map_err(|e| {
                    format!("tls_client_ca_file {}: unusable CA: {e}", path.display())
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| format!("tls_client_ca_file {}: {e}", path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(certs, key).map_err(|e| {
        format!(
            "tls_key_file {} does not fit tls_cert_file {}: {e}",
            files.key_file.display(),
            files.cert_file.display()
        )
    })?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn open(path: &Path, key: &str) -> Result<BufReader<File>, String> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|e| format!("cannot read {key} {}: {e}", path.display()))
}

/// Every certificate of a PEM file; at least one.
fn read_certs(path: &Path, key: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = rustls_pemfile::certs(&mut open(path, key)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{key} {}: bad PEM: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{key} {}: no PEM certificate found",
            path.display()
        ));
    }
    Ok(certs)
}

/// The first private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    const KEY: &str = "tls_key_file";
    rustls_pemfile::private_key(&mut open(path, KEY)?)
        .map_err(|e| format!("{KEY} {}: bad PEM: {e}", path.display()))?
        .ok_or_else(|| format!("{KEY} {}: no PEM private key found", path.display()))
}
