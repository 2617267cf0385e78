//! Test certificates, generated at test time (never committed keys): a CA,
//! a server certificate for `localhost` and `127.0.0.1`, a client
//! certificate, and a second, untrusted CA with its own server and client
//! certificates for the failure cases.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair};

/// PEM files of one test PKI, all in one directory.
#[derive(Debug, Clone)]
pub struct TestPki {
    /// The trusted CA (`ca.pem`).
    pub ca: PathBuf,
    /// Server certificate for `localhost` and `127.0.0.1`, signed by the CA.
    pub server_cert: PathBuf,
    /// Its private key.
    pub server_key: PathBuf,
    /// Client certificate (CN `client`), signed by the CA.
    pub client_cert: PathBuf,
    /// Its private key.
    pub client_key: PathBuf,
    /// A CA nobody trusts (`other-ca.pem`).
    pub other_ca: PathBuf,
    /// Server certificate for `localhost` and `127.0.0.1` signed by the other CA.
    pub other_server_cert: PathBuf,
    /// Its private key.
    pub other_server_key: PathBuf,
    /// Client certificate signed by the other CA (refused by mutual TLS).
    pub other_client_cert: PathBuf,
    /// Its private key.
    pub other_client_key: PathBuf,
}

/// The names the server certificates are valid for.
pub const SERVER_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

struct Ca {
    cert: Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().expect("CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let cert = params.self_signed(&key).expect("self-signed CA");
    Ca { cert, key }
}

fn leaf(ca: &Ca, common_name: &str, names: &[&str]) -> (String, String) {
    let key = KeyPair::generate().expect("leaf key");
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = CertificateParams::new(names).expect("leaf params");
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    let cert = params
        .signed_by(&key, &ca.cert, &ca.key)
        .expect("sign leaf");
    (cert.pem(), key.serialize_pem())
}

impl TestPki {
    /// Generates every certificate and writes it as PEM into `dir`.
    pub fn generate(dir: &Path) -> std::io::Result<TestPki> {
        std::fs::create_dir_all(dir)?;
        let trusted = ca("cursus test CA");
        let other = ca("untrusted test CA");
        let write = |name: &str, pem: &str| -> std::io::Result<PathBuf> {
            let path = dir.join(name);
            std::fs::write(&path, pem)?;
            Ok(path)
        };
        let (server_pem, server_key) = leaf(&trusted, "localhost", &SERVER_NAMES);
        let (client_pem, client_key) = leaf(&trusted, "client", &["client"]);
        let (other_server_pem, other_server_key) = leaf(&other, "localhost", &SERVER_NAMES);
        let (other_client_pem, other_client_key) = leaf(&other, "client", &["client"]);
        Ok(TestPki {
            ca: write("ca.pem", &trusted.cert.pem())?,
            server_cert: write("server.pem", &server_pem)?,
            server_key: write("server.key", &server_key)?,
            client_cert: write("client.pem", &client_pem)?,
            client_key: write("client.key", &client_key)?,
            other_ca: write("other-ca.pem", &other.cert.pem())?,
            other_server_cert: write("other-server.pem", &other_server_pem)?,
            other_server_key: write("other-server.key", &other_server_key)?,
            other_client_cert: write("other-client.pem", &other_client_pem)?,
            other_client_key: write("other-client.key", &other_client_key)?,
        })
    }
}
