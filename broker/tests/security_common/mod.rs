//! Shared helpers of the security tests: a raw Wire v2 client over plain
//! TCP or TLS (tokio-rustls), certificates from `cursus_testkit::pki`, and
//! brokers started with a TOML configuration.

#![allow(dead_code)]

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cursus_wire::{
    Command, CommandPayload, Compression, ErrorPayload, Frame, FrameCodec, Kind,
    NegotiationRequest, Status,
};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls::crypto::ring::default_provider;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore, SupportedProtocolVersion};
use tokio_rustls::TlsConnector;
use tokio_util::codec::Framed;

/// Upper bound of any single wait, so a broken broker fails instead of
/// hanging a test. Never used to assert timing.
pub const SAFETY: Duration = Duration::from_secs(20);

/// A byte stream a client can run on (TCP or TLS).
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// A negotiated frame-level Wire v2 client.
pub struct Client {
    framed: Framed<Box<dyn Io>, FrameCodec>,
    next_id: u64,
}

/// Client certificate and key files for mutual TLS.
pub type Identity<'a> = (&'a Path, &'a Path);

/// The TLS settings of a test client.
pub struct TlsClient<'a> {
    /// CA the broker's certificate must chain to.
    pub ca: &'a Path,
    /// Client certificate for mutual TLS.
    pub identity: Option<Identity<'a>>,
    /// Protocol versions offered (both when empty).
    pub versions: &'a [&'static SupportedProtocolVersion],
}

impl<'a> TlsClient<'a> {
    /// Trusts `ca`, no client certificate, TLS 1.2 and 1.3.
    pub fn trusting(ca: &'a Path) -> Self {
        TlsClient {
            ca,
            identity: None,
            versions: &[],
        }
    }

    fn connector(&self) -> TlsConnector {
        let mut roots = RootCertStore::empty();
        for cert in read_certs(self.ca) {
            roots.add(cert).expect("CA certificate");
        }
        let all = tokio_rustls::rustls::ALL_VERSIONS;
        let versions = if self.versions.is_empty() {
            all
        } else {
            self.versions
        };
        let builder = ClientConfig::builder_with_provider(Arc::new(default_provider()))
            .with_protocol_versions(versions)
            .expect("versions")
            .with_root_certificates(roots);
        let config = match self.identity {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let key = rustls_pemfile::private_key(&mut io::BufReader::new(
                    std::fs::File::open(key).expect("open key"),
                ))
                .expect("read key")
                .expect("a key");
                builder
                    .with_client_auth_cert(read_certs(cert), key)
                    .expect("client certificate")
            }
        };
        TlsConnector::from(Arc::new(config))
    }
}

fn read_certs(path: &Path) -> Vec<tokio_rustls::rustls::pki_types::CertificateDer<'static>> {
    rustls_pemfile::certs(&mut io::BufReader::new(
        std::fs::File::open(path).expect("open PEM"),
    ))
    .collect::<Result<_, _>>()
    .expect("PEM certificates")
}

impl Client {
    /// Connects over plain TCP and negotiates; panics on failure.
    pub async fn plain(addr: &str) -> Client {
        Client::try_plain(addr).await.expect("plain connection")
    }

    /// Connects over plain TCP and negotiates.
    pub async fn try_plain(addr: &str) -> io::Result<Client> {
        let stream = TcpStream::connect(addr).await?;
        Client::negotiate(Box::new(stream)).await
    }

    /// Connects over TLS (server name `localhost`) and negotiates. Any
    /// failure, including the broker closing right after the TLS
    /// handshake (a refused client certificate under TLS 1.3), is `Err`.
    pub async fn tls(addr: &str, settings: &TlsClient<'_>) -> io::Result<Client> {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").expect("server name");
        let stream = within(settings.connector().connect(name, tcp)).await?;
        Client::negotiate(Box::new(stream)).await
    }

    /// The TLS protocol version a client negotiates with the broker.
    pub async fn tls_version(addr: &str, settings: &TlsClient<'_>) -> io::Result<String> {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").expect("server name");
        let stream = within(settings.connector().connect(name, tcp)).await?;
        let version = format!("{:?}", stream.get_ref().1.protocol_version());
        let mut client = Client::negotiate(Box::new(stream)).await?;
        client.ok("LIST").await;
        Ok(version)
    }

    async fn negotiate(stream: Box<dyn Io>) -> io::Result<Client> {
        let mut framed = Framed::new(stream, FrameCodec::new());
        let request = NegotiationRequest::for_compression(Compression::None);
        framed
            .send(Frame::negotiation_request(request.encode().unwrap()))
            .await
            .map_err(|e| io::Error::other(e.to_string()))?;
        match within(framed.next()).await {
            Some(Ok(f)) if f.kind == Kind::NegotiationResponse && f.status == Status::Ok => {
                Ok(Client { framed, next_id: 1 })
            }
            Some(Ok(f)) => Err(io::Error::other(format!("unexpected frame {f:?}"))),
            Some(Err(e)) => Err(io::Error::other(e.to_string())),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "closed during negotiation",
            )),
        }
    }

    /// Sends a CRQ2 payload under `command`; `None` when the connection
    /// is gone.
    pub async fn send(&mut self, command: Command, payload: bytes::Bytes) -> Option<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = Frame::request(command, id, payload);
        self.framed.send(frame).await.ok().map(|()| id)
    }

    /// Reads the next frame (`None` on close or error).
    pub async fn recv(&mut self) -> Option<Frame> {
        match within(self.framed.next()).await {
            Some(Ok(frame)) => Some(frame),
            _ => None,
        }
    }

    /// Sends a text command line and returns its reply frame (`None` when
    /// the connection closed instead).
    pub async fn try_request(&mut self, line: &str) -> Option<Frame> {
        let (command, payload) = CommandPayload::parse_line(line).expect("valid line");
        let id = self.send(command, payload.to_bytes().unwrap()).await?;
        let frame = self.recv().await?;
        assert_eq!(frame.request_id, id, "reply correlates");
        Some(frame)
    }

    /// `OK …` text or the typed error of `line`.
    pub async fn reply(&mut self, line: &str) -> Result<String, ErrorPayload> {
        let frame = self
            .try_request(line)
            .await
            .unwrap_or_else(|| panic!("{line:?}: connection closed"));
        decode_reply(frame)
    }

    /// Expects status OK; returns the text.
    pub async fn ok(&mut self, line: &str) -> String {
        self.reply(line)
            .await
            .unwrap_or_else(|e| panic!("{line:?} failed: {}", e.render()))
    }

    /// Expects status ERROR; returns the typed error.
    pub async fn error(&mut self, line: &str) -> ErrorPayload {
        match self.reply(line).await {
            Ok(text) => panic!("{line:?} unexpectedly succeeded: {text}"),
            Err(e) => e,
        }
    }

    /// Publishes one record to `topic` as a CBV2 batch (no fields, so no
    /// inline credentials); its reply.
    pub async fn publish_batch(
        &mut self,
        topic: &str,
        value: &str,
    ) -> Result<String, ErrorPayload> {
        let batch = cursus_wire::Batch {
            acks: cursus_wire::Acks::Leader,
            records: vec![cursus_wire::Record::new(bytes::Bytes::copy_from_slice(
                value.as_bytes(),
            ))],
            ..cursus_wire::Batch::new(topic, 0)
        };
        let bytes = batch
            .to_bytes(cursus_wire::RecordVersionPolicy::Minimal)
            .unwrap();
        let id = self.send(Command::Publish, bytes).await.expect("send");
        let frame = self.recv().await.expect("batch reply");
        assert_eq!(frame.request_id, id);
        decode_reply(frame)
    }

    /// True when the broker has closed the connection.
    pub async fn is_closed(&mut self) -> bool {
        self.recv().await.is_none()
    }
}

/// The text of an OK frame or the typed error of an ERROR frame.
pub fn decode_reply(frame: Frame) -> Result<String, ErrorPayload> {
    match frame.status {
        Status::Ok => Ok(String::from_utf8_lossy(&frame.payload).into_owned()),
        _ => Err(ErrorPayload::decode(frame.payload).expect("typed error payload")),
    }
}

/// Awaits `f` with the safety bound.
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(SAFETY, f).await.expect("timed out")
}

/// The broker binary cargo built for these tests. Handing it to the
/// testkit (`CURSUS_BROKER_BIN`) spares a second `cargo build` of the
/// binary with the features of a non-test build.
pub fn broker_bin() -> std::path::PathBuf {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let bin = env!("CARGO_BIN_EXE_cursus-broker");
    ONCE.call_once(|| std::env::set_var("CURSUS_BROKER_BIN", bin));
    bin.into()
}

/// Starts a broker (testkit) with `toml` as its configuration file.
pub fn start(toml: &str) -> cursus_testkit::TestBroker {
    broker_bin();
    cursus_testkit::TestBroker::start_with_config(toml)
}

/// Error codes that mean "stopped by authentication or authorization".
pub const DENIALS: [&str; 4] = [
    "authentication_required",
    "authentication_failed",
    "NOT_AUTHORIZED_FOR_OPERATION",
    "NOT_AUTHORIZED_FOR_TOPIC",
];

/// `[[users]]` TOML for `(principal, token, permissions)`.
pub fn users_toml(users: &[(&str, &str, &[&str])]) -> String {
    let mut toml = String::from("enable_sasl = true\n");
    for (principal, token, permissions) in users {
        let list: Vec<String> = permissions.iter().map(|p| format!("{p:?}")).collect();
        toml += &format!(
            "[[users]]\nprincipal = {principal:?}\ntoken = {token:?}\npermissions = [{}]\n",
            list.join(", ")
        );
    }
    toml
}

/// TOML string literal of a path.
pub fn toml_path(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

/// Runs the binary with `toml` and extra flags; expects it to fail at
/// startup and returns its stderr.
pub fn startup_failure(toml: &str, flags: &[&str]) -> String {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("broker.toml");
    std::fs::write(&config, toml).unwrap();
    let out = Command::new(broker_bin())
        .args(["--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--config")
        .arg(&config)
        .args(flags)
        .stdin(Stdio::null())
        .output()
        .expect("run broker");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "started with {toml:?}: {stderr}");
    stderr
}

/// A broker process whose banner and log (stderr) the test reads.
pub struct Logged {
    /// The process; the test kills it.
    pub child: std::process::Child,
    /// Its first stdout line.
    pub banner: String,
    /// Its log.
    pub stderr: std::process::ChildStderr,
}

/// Starts the binary with `config`, a data directory, `flags` (the
/// listeners) and `RUST_LOG=log`, keeping its stderr.
pub fn spawn_logged(config: &Path, data: &Path, flags: &[&str], log: &str) -> Logged {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(broker_bin())
        .args(flags)
        .args(["--health-listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn broker");
    let mut banner = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut banner)
        .expect("banner");
    let stderr = child.stderr.take().expect("stderr");
    Logged {
        child,
        banner,
        stderr,
    }
}

/// The value of `name=` in a banner line.
pub fn banner_field(banner: &str, name: &str) -> String {
    banner
        .split_whitespace()
        .find_map(|t| t.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name}= in {banner:?}"))
        .to_owned()
}
