//! Shared fixtures for the broker's integration tests: a [`TestBroker`] that
//! runs the real binary on free ports in its own temporary directory, and a
//! small frame-level [`Client`].

#![allow(dead_code)]

pub mod cluster;

pub use cursus_testkit::{eventually, eventually_async};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command as Process, Stdio};
use std::time::Duration;

use bytes::Bytes;
use cursus_wire::{
    Batch, Command, CommandPayload, Compression, ErrorPayload, Frame, FrameCodec, Kind,
    NegotiationRequest, NegotiationResponse, Status,
};
use futures_util::{SinkExt, StreamExt};
use tempfile::TempDir;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

/// Upper bound for any single wait in a test, so a broken broker fails the
/// test instead of hanging it. Never used to assert timing.
pub const SAFETY: Duration = Duration::from_secs(20);

/// The broker binary running on free ports with its own data directory.
pub struct TestBroker {
    child: Child,
    _stdout: BufReader<ChildStdout>,
    /// Client listener address.
    pub addr: SocketAddr,
    /// Health listener address.
    pub health: SocketAddr,
    /// Temporary directory holding the data directory (and config file).
    pub dir: Option<TempDir>,
    args: Vec<String>,
}

impl TestBroker {
    /// Starts a broker with default settings.
    pub fn start() -> TestBroker {
        Self::start_with(&[])
    }

    /// Starts a broker with extra command-line arguments.
    pub fn start_with(args: &[&str]) -> TestBroker {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::start_in(dir, args.iter().map(|s| s.to_string()).collect())
    }

    /// Starts a broker whose data directory is `dir/data`.
    pub fn start_in(dir: TempDir, args: Vec<String>) -> TestBroker {
        let data = dir.path().join("data");
        // CURSUS_BROKER_BIN runs another build of the broker (e.g. to compare
        // benchmark numbers of two versions).
        let binary = std::env::var_os("CURSUS_BROKER_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_cursus-broker").into());
        let mut cmd = Process::new(binary);
        cmd.arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--health-listen")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(&data)
            .arg("--log-level")
            .arg("warn")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("CURSUS_TEST_LOG").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        let mut child = cmd.spawn().expect("spawn broker");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read startup line");
        assert!(
            line.starts_with("cursus-broker listening "),
            "unexpected startup line {line:?}"
        );
        let field = |name: &str| -> SocketAddr {
            line.split_whitespace()
                .find_map(|t| t.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("no {name} in {line:?}"))
                .parse()
                .expect("socket address")
        };
        TestBroker {
            addr: field("addr"),
            health: field("health"),
            child,
            _stdout: stdout,
            dir: Some(dir),
            args,
        }
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.as_ref().expect("dir").path().join("data")
    }

    /// The broker's process id (for `/proc/<pid>/…`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size of the broker process in KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc/<pid>/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no VmRSS in {status}"))
    }

    /// `kill -9` without restarting; waits until the process is gone.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// True while the broker process has not exited.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `kill -9`, then start a new broker on the same data directory (new
    /// ports, read from the new startup line).
    pub fn crash_and_restart(mut self) -> TestBroker {
        self.kill9();
        let dir = self.dir.take().expect("dir");
        let args = std::mem::take(&mut self.args);
        Self::start_in(dir, args)
    }

    /// Sends SIGTERM and waits for the process to exit; returns whether it
    /// exited successfully.
    pub fn terminate(&mut self) -> bool {
        let pid = self.child.id().to_string();
        let _ = Process::new("kill").args(["-TERM", &pid]).status();
        self.child.wait().map(|s| s.success()).unwrap_or(false)
    }

    /// A negotiated client (no compression).
    pub async fn client(&self) -> Client {
        Client::connect(self.addr, Compression::None).await
    }

    /// `GET path` on the health listener: the HTTP status code.
    pub fn http_get(&self, path: &str) -> u16 {
        http_status(self.health, path)
    }

    /// Waits (bounded) until `/ready` answers 200.
    pub fn wait_ready(&self) {
        eventually(SAFETY, "/ready to answer 200", || {
            match self.http_get("/ready") {
                200 => Ok(()),
                status => Err(status),
            }
        });
    }

    /// Waits (bounded) until the process has exited by itself, which is
    /// `what` the test awaits.
    pub fn wait_exit(&mut self, what: &str) {
        eventually(SAFETY, what, || !self.is_running());
    }
}

/// Waits (bounded) until retention moved the earliest offset of
/// `topic`/`partition` to `at_least` or beyond; returns it.
pub async fn earliest_at_least(c: &mut Client, topic: &str, partition: u32, at_least: u64) -> u64 {
    let line = format!("LIST_OFFSETS topic={topic} partition={partition}");
    let what = format!("{topic}/{partition} to start at {at_least} or later");
    eventually_async!(SAFETY, what, async {
        let offsets = c.ok(&line).await;
        let earliest: u64 = offsets
            .split(':')
            .find_map(|t| t.strip_prefix("earliest="))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no earliest= in {offsets}"));
        if earliest >= at_least {
            Ok(earliest)
        } else {
            Err(offsets)
        }
    })
}

impl Drop for TestBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes a config file into a fresh temp dir and returns both.
pub fn config_dir(toml: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broker.toml");
    std::fs::write(&path, toml).expect("write config");
    (dir, path)
}

/// Minimal HTTP/1.1 GET returning the status code.
pub fn http_status(addr: SocketAddr, path: &str) -> u16 {
    http_fetch(addr, path).0
}

/// Minimal HTTP/1.1 GET returning the status code, the header block and
/// the body.
pub fn http_fetch(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect health");
    s.set_read_timeout(Some(SAFETY)).ok();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).expect("read health");
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("bad HTTP response {response:?}"));
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (status, head.to_owned(), body.to_owned())
}

/// A frame-level Wire v2 client.
pub struct Client {
    framed: Framed<TcpStream, FrameCodec>,
    next_id: u64,
}

impl Client {
    /// Connects and negotiates `compression`.
    pub async fn connect(addr: SocketAddr, compression: Compression) -> Client {
        Self::try_connect(addr, compression).await.expect("connect")
    }

    /// [`connect`](Self::connect) to a broker that may be down or going
    /// away: why it failed instead of a panic.
    pub async fn try_connect(addr: SocketAddr, compression: Compression) -> Result<Client, String> {
        let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let mut framed = Framed::new(stream, FrameCodec::new());
        let request = NegotiationRequest::for_compression(compression);
        framed
            .send(Frame::negotiation_request(request.encode().unwrap()))
            .await
            .map_err(|e| format!("send negotiation: {e}"))?;
        let reply = within(framed.next())
            .await
            .ok_or("no negotiation reply")?
            .map_err(|e| format!("negotiation reply: {e}"))?;
        assert_eq!(reply.kind, Kind::NegotiationResponse);
        assert_eq!(reply.status, Status::Ok);
        let response = NegotiationResponse::decode(reply.payload).unwrap();
        assert_eq!(response.version, 2);
        assert_eq!(response.compression, compression);
        framed.codec_mut().set_compression(compression);
        Ok(Client { framed, next_id: 1 })
    }

    /// Sends a raw frame.
    pub async fn send_frame(&mut self, frame: Frame) {
        self.framed.send(frame).await.expect("send");
    }

    /// Sends `payload` under `command` without panicking when the broker
    /// has gone away; returns the request id, or `None` on a write error.
    pub async fn try_send(&mut self, command: Command, payload: Bytes) -> Option<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.framed
            .send(Frame::request(command, id, payload))
            .await
            .ok()
            .map(|()| id)
    }

    /// Writes raw bytes to the socket.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        use tokio::io::AsyncWriteExt;
        self.framed.get_mut().write_all(bytes).await.expect("write");
    }

    /// Sends `payload` under `command`; returns the request id.
    pub async fn send(&mut self, command: Command, payload: Bytes) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send_frame(Frame::request(command, id, payload)).await;
        id
    }

    /// Sends a text command line as CRQ2; returns the request id.
    pub async fn send_line(&mut self, line: &str) -> u64 {
        let (command, payload) = CommandPayload::parse_line(line).expect("valid line");
        self.send(command, payload.to_bytes().unwrap()).await
    }

    /// Reads the next frame (`None` on close or error).
    pub async fn recv(&mut self) -> Option<Frame> {
        match tokio::time::timeout(SAFETY, self.framed.next()).await {
            Ok(Some(Ok(frame))) => Some(frame),
            Ok(_) => None,
            Err(_) => panic!("no frame within {SAFETY:?}"),
        }
    }

    /// Sends `line` and returns the reply frame, checking correlation.
    pub async fn request(&mut self, line: &str) -> Frame {
        let id = self.send_line(line).await;
        let frame = self.recv().await.expect("reply");
        assert_eq!(frame.request_id, id, "reply correlates");
        frame
    }

    /// Sends `line`: the payload of an OK reply, or the rendered error (what
    /// a wait saw instead).
    pub async fn try_ok(&mut self, line: &str) -> Result<Bytes, String> {
        let frame = self.request(line).await;
        match frame.status {
            Status::Ok => Ok(frame.payload),
            status => Err(ErrorPayload::decode(frame.payload)
                .map_or_else(|_| format!("{status:?}"), |e| e.render())),
        }
    }

    /// [`try_ok`](Self::try_ok) for a request that may only fail with a
    /// retryable error (panics on any other).
    pub async fn try_retryable(&mut self, line: &str) -> Result<Bytes, ErrorPayload> {
        let frame = self.request(line).await;
        if frame.status == Status::Ok {
            return Ok(frame.payload);
        }
        let e = ErrorPayload::decode(frame.payload).unwrap();
        assert!(e.retryable, "{line}: {}", e.render());
        Err(e)
    }

    /// Sends `line`, expects status OK, returns the text payload.
    pub async fn ok(&mut self, line: &str) -> String {
        let frame = self.request(line).await;
        let text = String::from_utf8_lossy(&frame.payload).into_owned();
        if frame.status != Status::Ok {
            panic!(
                "{line:?} failed: {}",
                ErrorPayload::decode(frame.payload.clone())
                    .map(|e| e.render())
                    .unwrap_or(text)
            );
        }
        text
    }

    /// Sends `line`, expects status ERROR, returns the typed error.
    pub async fn error(&mut self, line: &str) -> ErrorPayload {
        let frame = self.request(line).await;
        assert_eq!(
            frame.status,
            Status::Error,
            "{line:?} unexpectedly succeeded: {:?}",
            String::from_utf8_lossy(&frame.payload)
        );
        ErrorPayload::decode(frame.payload).expect("typed error payload")
    }

    /// Sends a batch as PUBLISH and returns the reply frame.
    pub async fn publish_batch(&mut self, batch: &Batch) -> Frame {
        let bytes = batch
            .to_bytes(cursus_wire::RecordVersionPolicy::Fixed(
                cursus_wire::RecordVersion::V3,
            ))
            .unwrap();
        let id = self.send(Command::Publish, bytes).await;
        let frame = self.recv().await.expect("reply");
        assert_eq!(frame.request_id, id);
        frame
    }

    /// CONSUME and decode the batch.
    pub async fn consume(&mut self, line: &str) -> Batch {
        let frame = self.request(line).await;
        assert_eq!(
            frame.status,
            Status::Ok,
            "{line}: {:?}",
            ErrorPayload::decode(frame.payload.clone())
        );
        Batch::decode(frame.payload).expect("CBV2 batch")
    }

    /// True when the broker closed the connection (EOF or error on read).
    pub async fn is_closed(&mut self) -> bool {
        self.recv().await.is_none()
    }
}

/// Awaits `f` with the safety bound.
pub async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(SAFETY, f).await.expect("timed out")
}

/// Raw socket helper: writes `bytes`, then returns true if the broker
/// closes the connection without sending anything.
pub async fn closed_without_reply(addr: SocketAddr, bytes: &[u8]) -> bool {
    use tokio::io::AsyncWriteExt;
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(bytes).await.expect("write");
    let mut buf = [0u8; 64];
    match within(s.read(&mut buf)).await {
        Ok(0) => true,
        Ok(_) => false,
        Err(_) => true, // reset
    }
}

/// The uncompressed bytes of `frame`.
pub fn frame_bytes(frame: &Frame) -> Vec<u8> {
    frame.to_bytes(Compression::None).unwrap().to_vec()
}

/// Parses `key=value` tokens of an `OK …` line.
pub fn kv(line: &str) -> std::collections::HashMap<String, String> {
    line.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}
