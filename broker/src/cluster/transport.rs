//! Broker-to-broker request/response over TCP with Wire v2 frames.
//!
//! The cluster listener speaks plain Wire v2 frames (compression none, no
//! negotiation handshake): every request is a kind-3 frame whose payload is
//!
//! ```text
//! u16 token_len (0xFFFF = no token) | token bytes | body (opaque)
//! ```
//!
//! and every answer a kind-4 frame with the same request id: status OK with
//! the reply body, or status ERROR with a typed [`ErrorPayload`]. A request
//! whose token does not match the server's exactly is refused with
//! `internal_command_unauthorized` (class authorization) before its handler
//! runs. The body layout belongs to the command: Raft RPCs are JSON
//! envelopes on [`Command::RaftApply`] (see `cluster::raft`); other
//! commands (e.g. `REPLICATE_MESSAGE`) go to the handler the broker
//! registers.
//!
//! Server: [`serve`] accepts connections until its shutdown token fires and
//! answers each connection's requests in order. Client: [`PeerClient`] keeps a
//! small pool of connections to one address (one request in flight per
//! connection, up to [`PeerClientConfig::max_connections`] at once, so a slow
//! request does not hold back the others), reconnects after errors and bounds
//! every request with a timeout. [`PeerPool`] hands out one client per
//! address.
//!
//! With `internal_use_tls` ([`InternalTls`]) both sides run the frames over
//! mutual TLS: [`serve_tls`] completes a TLS handshake that requires a
//! client certificate signed by the internal CA before it reads any frame
//! (a plain or untrusted connection is closed unanswered), and the peer
//! clients dial with the broker's certificate as client certificate.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use cursus_wire::{Command, ErrorPayload, Frame, FrameCodec, FrameCodecError, Kind, Status};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::codec::Framed;
use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::internal_tls::{self, InternalTls};

/// A boxed, sendable future (what [`ClusterHandler::handle`] returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The error code of a request whose internal token is missing or wrong.
pub const UNAUTHORIZED: &str = "internal_command_unauthorized";

const NO_TOKEN: u16 = u16::MAX;

/// Answers the requests that arrive on the cluster listener.
pub trait ClusterHandler: Send + Sync + 'static {
    /// Handles one authenticated request: `command` from the frame header,
    /// `body` the payload after the token. The reply body on success, a
    /// typed error otherwise.
    fn handle(&self, command: Command, body: Bytes) -> BoxFuture<'_, Result<Bytes, ErrorPayload>>;
}

/// Encodes a request payload: the token prefix, then `body`.
pub fn encode_request(token: Option<&str>, body: &[u8]) -> Bytes {
    let token_bytes = token.map(str::as_bytes);
    let mut out = BytesMut::with_capacity(2 + token_bytes.map_or(0, <[u8]>::len) + body.len());
    match token_bytes {
        Some(t) => {
            // Tokens are configuration strings; longer than 65534 bytes is
            // not a token anyone configures. Cut rather than fail.
            let t = &t[..t.len().min(usize::from(NO_TOKEN) - 1)];
            out.put_u16(t.len() as u16);
            out.put_slice(t);
        }
        None => out.put_u16(NO_TOKEN),
    }
    out.put_slice(body);
    out.freeze()
}

/// Splits a request payload into its token and body.
pub fn decode_request(payload: Bytes) -> Result<(Option<String>, Bytes), ErrorPayload> {
    let malformed =
        || ErrorPayload::new("malformed_input").with_message("malformed cluster request payload");
    if payload.len() < 2 {
        return Err(malformed());
    }
    let len = u16::from_be_bytes([payload[0], payload[1]]);
    if len == NO_TOKEN {
        return Ok((None, payload.slice(2..)));
    }
    let end = 2 + usize::from(len);
    if payload.len() < end {
        return Err(malformed());
    }
    let token = std::str::from_utf8(&payload[2..end])
        .map_err(|_| malformed())?
        .to_owned();
    Ok((Some(token), payload.slice(end..)))
}

/// Constant-time-ish token comparison (`None` only equals `None`).
fn token_matches(expected: Option<&str>, got: Option<&str>) -> bool {
    use subtle::ConstantTimeEq;
    match (expected, got) {
        (None, None) => true,
        (Some(a), Some(b)) => bool::from(a.as_bytes().ct_eq(b.as_bytes())),
        _ => false,
    }
}

/// How long a peer has to complete the TLS handshake on the cluster
/// listener (a connection that stalls it would hold a task forever).
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the cluster listener until `shutdown` fires: accepts connections
/// and answers their requests with `handler`, refusing any request whose
/// token is not exactly `token`. Open connections are closed on shutdown.
pub async fn serve(
    listener: TcpListener,
    token: Option<String>,
    handler: Arc<dyn ClusterHandler>,
    shutdown: CancellationToken,
) {
    serve_tls(listener, None, token, handler, shutdown).await;
}

/// [`serve`], with `tls` over mutual TLS: a connection whose handshake
/// fails (plain TCP, no or an untrusted client certificate) is closed
/// before any frame is read.
pub async fn serve_tls(
    listener: TcpListener,
    tls: Option<InternalTls>,
    token: Option<String>,
    handler: Arc<dyn ClusterHandler>,
    shutdown: CancellationToken,
) {
    let token: Arc<Option<String>> = Arc::new(token);
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                let _ = stream.set_nodelay(true);
                let token = token.clone();
                let handler = handler.clone();
                let shutdown = shutdown.clone();
                // The configuration of now (a SIGHUP may have replaced it).
                let tls = tls.as_ref().map(InternalTls::acceptor);
                tokio::spawn(async move {
                    let served = async {
                        match tls {
                            None => serve_connection(stream, token, handler).await,
                            Some(tls) => {
                                let handshake = tls.accept(stream);
                                match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, handshake).await {
                                    Ok(Ok(stream)) => {
                                        serve_connection(stream, token, handler).await;
                                    }
                                    Ok(Err(e)) => {
                                        debug!(%peer, error = %e, "cluster TLS handshake refused");
                                    }
                                    Err(_) => debug!(%peer, "cluster TLS handshake timed out"),
                                }
                            }
                        }
                    };
                    tokio::select! {
                        _ = shutdown.cancelled() => {}
                        () = served => {}
                    }
                    debug!(%peer, "cluster connection closed");
                });
            }
            Err(e) => {
                debug!(error = %e, "cluster accept failed");
                // Out of descriptors and the like: do not spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn serve_connection<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    token: Arc<Option<String>>,
    handler: Arc<dyn ClusterHandler>,
) {
    let mut framed = Framed::new(stream, FrameCodec::new());
    while let Some(next) = framed.next().await {
        let frame = match next {
            Ok(frame) => frame,
            Err(e) => {
                debug!(error = %e, "cluster connection: bad frame; closing");
                return;
            }
        };
        if frame.kind != Kind::Request {
            debug!(kind = ?frame.kind, "cluster connection: not a request; closing");
            return;
        }
        let (command, id) = (frame.command, frame.request_id);
        let result = match decode_request(frame.payload) {
            Ok((got, body)) if token_matches(token.as_deref(), got.as_deref()) => {
                handler.handle(command, body).await
            }
            Ok(_) => Err(ErrorPayload::new(UNAUTHORIZED)
                .with_message("internal command refused: wrong or missing internal token")
                .with_field("command", command.name())),
            Err(e) => Err(e),
        };
        let reply = match result {
            Ok(body) => Frame::response(command, id, Status::Ok, body),
            Err(error) => {
                let payload = error.to_bytes().unwrap_or_else(|_| {
                    ErrorPayload::new("broker_error")
                        .to_bytes()
                        .unwrap_or_default()
                });
                Frame::response(command, id, Status::Error, payload)
            }
        };
        if let Err(e) = framed.send(reply).await {
            debug!(error = %e, "cluster connection: write failed; closing");
            return;
        }
    }
}

/// Why a request to a peer failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// Could not connect (the request was not sent).
    #[error("connect to {addr}: {source}")]
    Connect {
        /// The peer address.
        addr: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The connection failed while the request was in flight (it may or may
    /// not have been handled).
    #[error("cluster request to {addr}: {source}")]
    Io {
        /// The peer address.
        addr: String,
        /// The cause.
        #[source]
        source: FrameCodecError,
    },
    /// The peer closed the connection before answering.
    #[error("cluster peer {addr} closed the connection")]
    Closed {
        /// The peer address.
        addr: String,
    },
    /// No answer within the timeout.
    #[error("cluster request to {addr} timed out after {timeout:?}")]
    Timeout {
        /// The peer address.
        addr: String,
        /// The timeout that expired.
        timeout: Duration,
    },
    /// The peer answered something that is not an answer to the request.
    #[error("cluster peer {addr} broke the protocol: {reason}")]
    Protocol {
        /// The peer address.
        addr: String,
        /// What was wrong.
        reason: String,
    },
    /// The peer answered with a typed error.
    #[error("cluster peer {addr} refused: {error}")]
    Remote {
        /// The peer address.
        addr: String,
        /// Its error.
        error: ErrorPayload,
    },
}

impl TransportError {
    /// True when the request certainly did not reach the peer's handler.
    pub fn not_sent(&self) -> bool {
        matches!(self, TransportError::Connect { .. })
    }
}

/// Settings of a [`PeerClient`].
#[derive(Debug, Clone)]
pub struct PeerClientConfig {
    /// The internal token sent with every request.
    pub token: Option<String>,
    /// Most connections (and so requests in flight) to one peer.
    pub max_connections: usize,
    /// Default bound on one request, connecting included.
    pub request_timeout: Duration,
    /// Bound on establishing a connection (the TLS handshake included).
    pub connect_timeout: Duration,
    /// Dial over mutual TLS (`internal_use_tls`); `None` dials plain TCP.
    pub tls: Option<InternalTls>,
    /// Addresses dialed instead of a peer's (`cluster_dial_overrides`: a
    /// proxy in front of the peer); TLS still names the peer's address.
    pub dial_overrides: Arc<BTreeMap<String, String>>,
}

impl Default for PeerClientConfig {
    fn default() -> Self {
        PeerClientConfig {
            token: None,
            max_connections: 8,
            request_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
            tls: None,
            dial_overrides: Arc::default(),
        }
    }
}

type Conn = Framed<Either<TcpStream, tokio_rustls::client::TlsStream<TcpStream>>, FrameCodec>;

/// A client for one peer's cluster listener with a small connection pool.
#[derive(Debug)]
pub struct PeerClient {
    addr: String,
    config: PeerClientConfig,
    idle: Mutex<Vec<Conn>>,
    permits: Semaphore,
    next_id: AtomicU64,
}

impl PeerClient {
    /// A client for `addr` (`host:port`); connects lazily.
    pub fn new(addr: impl Into<String>, config: PeerClientConfig) -> Self {
        let max = config.max_connections.max(1);
        PeerClient {
            addr: addr.into(),
            permits: Semaphore::new(max),
            config,
            idle: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// The peer address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends `body` as `command` and waits for the answer, bounded by the
    /// configured request timeout.
    pub async fn request(&self, command: Command, body: Bytes) -> Result<Bytes, TransportError> {
        self.request_with_timeout(command, body, self.config.request_timeout)
            .await
    }

    /// [`request`](Self::request) with an explicit timeout (waiting for a
    /// free connection and connecting included).
    pub async fn request_with_timeout(
        &self,
        command: Command,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Bytes, TransportError> {
        match tokio::time::timeout(timeout, self.request_inner(command, body)).await {
            Ok(result) => result,
            Err(_) => Err(TransportError::Timeout {
                addr: self.addr.clone(),
                timeout,
            }),
        }
    }

    async fn request_inner(&self, command: Command, body: Bytes) -> Result<Bytes, TransportError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let pooled = self.idle.lock().expect("pool lock").pop();
        let mut conn = match pooled {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        // The connection is dropped (not returned to the pool) on every error
        // below, and on a timeout (this future is dropped with it).
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let payload = encode_request(self.config.token.as_deref(), &body);
        let frame = Frame::request(command, id, payload);
        if let Err(source) = conn.send(frame).await {
            self.forget_idle();
            return Err(TransportError::Io {
                addr: self.addr.clone(),
                source,
            });
        }
        let reply = match conn.next().await {
            Some(Ok(reply)) => reply,
            Some(Err(source)) => {
                self.forget_idle();
                return Err(TransportError::Io {
                    addr: self.addr.clone(),
                    source,
                });
            }
            None => {
                self.forget_idle();
                return Err(TransportError::Closed {
                    addr: self.addr.clone(),
                });
            }
        };
        if reply.kind != Kind::Response || reply.request_id != id || reply.command != command {
            return Err(TransportError::Protocol {
                addr: self.addr.clone(),
                reason: format!(
                    "expected a response to {} #{id}, got {:?} {} #{}",
                    command.name(),
                    reply.kind,
                    reply.command.name(),
                    reply.request_id
                ),
            });
        }
        self.release(conn);
        match reply.status {
            Status::Ok => Ok(reply.payload),
            _ => match ErrorPayload::decode(reply.payload) {
                Ok(error) => Err(TransportError::Remote {
                    addr: self.addr.clone(),
                    error,
                }),
                Err(e) => Err(TransportError::Protocol {
                    addr: self.addr.clone(),
                    reason: format!("undecodable error payload: {e}"),
                }),
            },
        }
    }

    async fn connect(&self) -> Result<Conn, TransportError> {
        let connect = async {
            let dialed = self
                .config
                .dial_overrides
                .get(&self.addr)
                .unwrap_or(&self.addr);
            let stream = TcpStream::connect(dialed.as_str()).await?;
            let _ = stream.set_nodelay(true);
            match &self.config.tls {
                None => Ok::<_, std::io::Error>(Either::Left(stream)),
                Some(tls) => {
                    let name = internal_tls::server_name(&self.addr)
                        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
                    let stream = tls.connector().connect(name, stream).await?;
                    Ok(Either::Right(stream))
                }
            }
        };
        let stream = match tokio::time::timeout(self.config.connect_timeout, connect).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(source)) => {
                return Err(TransportError::Connect {
                    addr: self.addr.clone(),
                    source,
                })
            }
            Err(_) => {
                return Err(TransportError::Connect {
                    addr: self.addr.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out"),
                })
            }
        };
        Ok(Framed::new(stream, FrameCodec::new()))
    }

    fn release(&self, conn: Conn) {
        let mut idle = self.idle.lock().expect("pool lock");
        if idle.len() < self.config.max_connections {
            idle.push(conn);
        }
    }

    /// After one pooled connection failed the others are likely stale too
    /// (the peer restarted): reconnect afresh next time.
    fn forget_idle(&self) {
        self.idle.lock().expect("pool lock").clear();
    }
}

/// One [`PeerClient`] per peer address, created on first use.
#[derive(Debug, Default)]
pub struct PeerPool {
    config: PeerClientConfig,
    clients: Mutex<HashMap<String, Arc<PeerClient>>>,
}

impl PeerPool {
    /// A pool whose clients all use `config`.
    pub fn new(config: PeerClientConfig) -> Self {
        PeerPool {
            config,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `addr`.
    pub fn get(&self, addr: &str) -> Arc<PeerClient> {
        let mut clients = self.clients.lock().expect("peer pool lock");
        clients
            .entry(addr.to_owned())
            .or_insert_with(|| Arc::new(PeerClient::new(addr, self.config.clone())))
            .clone()
    }

    /// The settings every client uses.
    pub fn config(&self) -> &PeerClientConfig {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cursus_wire::ErrorClass;

    struct Echo;

    impl ClusterHandler for Echo {
        fn handle(
            &self,
            command: Command,
            body: Bytes,
        ) -> BoxFuture<'_, Result<Bytes, ErrorPayload>> {
            Box::pin(async move {
                match command {
                    Command::ReplicateMessage => Ok(body),
                    Command::RaftApply if body.as_ref() == b"slow" => {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        Ok(body)
                    }
                    _ => Err(ErrorPayload::new("unknown_command").with_message("no")),
                }
            })
        }
    }

    async fn server(token: Option<&str>) -> (String, CancellationToken) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let shutdown = CancellationToken::new();
        tokio::spawn(serve(
            listener,
            token.map(str::to_owned),
            Arc::new(Echo),
            shutdown.clone(),
        ));
        (addr, shutdown)
    }

    fn client(addr: &str, token: Option<&str>) -> PeerClient {
        PeerClient::new(
            addr,
            PeerClientConfig {
                token: token.map(str::to_owned),
                ..PeerClientConfig::default()
            },
        )
    }

    #[test]
    fn request_payload_round_trips() {
        let p = encode_request(Some("s3cret"), b"body");
        let (t, b) = decode_request(p).unwrap();
        assert_eq!(t.as_deref(), Some("s3cret"));
        assert_eq!(b.as_ref(), b"body");
        let (t, b) = decode_request(encode_request(None, b"")).unwrap();
        assert_eq!(t, None);
        assert!(b.is_empty());
        assert!(decode_request(Bytes::from_static(&[0, 9, b'x'])).is_err());
    }

    #[tokio::test]
    async fn echo_and_typed_errors() {
        let (addr, shutdown) = server(Some("tok")).await;
        let c = client(&addr, Some("tok"));
        let body = Bytes::from_static(b"\x00\x00\x00\x02{}raw");
        assert_eq!(
            c.request(Command::ReplicateMessage, body.clone())
                .await
                .unwrap(),
            body
        );
        match c.request(Command::Stream, Bytes::new()).await {
            Err(TransportError::Remote { error, .. }) => assert_eq!(error.code, "unknown_command"),
            other => panic!("{other:?}"),
        }
        // The connection survives an error answer and is reused.
        assert_eq!(c.idle.lock().unwrap().len(), 1);
        shutdown.cancel();
    }

    #[tokio::test]
    async fn wrong_or_missing_token_is_unauthorized() {
        let (addr, shutdown) = server(Some("tok")).await;
        for token in [Some("nope"), None] {
            match client(&addr, token)
                .request(Command::ReplicateMessage, Bytes::from_static(b"x"))
                .await
            {
                Err(TransportError::Remote { error, .. }) => {
                    assert_eq!(error.code, UNAUTHORIZED);
                    assert_eq!(error.class, ErrorClass::Authorization);
                }
                other => panic!("{other:?}"),
            }
        }
        // A server without a token refuses a client that sends one.
        let (open_addr, open_shutdown) = server(None).await;
        assert!(client(&open_addr, Some("tok"))
            .request(Command::ReplicateMessage, Bytes::new())
            .await
            .is_err());
        assert!(client(&open_addr, None)
            .request(Command::ReplicateMessage, Bytes::new())
            .await
            .is_ok());
        shutdown.cancel();
        open_shutdown.cancel();
    }

    #[tokio::test]
    async fn slow_request_does_not_block_others_and_times_out() {
        let (addr, shutdown) = server(None).await;
        let c = Arc::new(client(&addr, None));
        let slow = {
            let c = c.clone();
            tokio::spawn(async move {
                c.request_with_timeout(
                    Command::RaftApply,
                    Bytes::from_static(b"slow"),
                    Duration::from_millis(300),
                )
                .await
            })
        };
        for _ in 0..5 {
            c.request(Command::ReplicateMessage, Bytes::from_static(b"fast"))
                .await
                .unwrap();
        }
        assert!(matches!(
            slow.await.unwrap(),
            Err(TransportError::Timeout { .. })
        ));
        shutdown.cancel();
    }

    #[tokio::test]
    async fn reconnects_after_the_server_restarts() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(serve(listener, None, Arc::new(Echo), shutdown.clone()));
        let c = client(&addr.to_string(), None);
        c.request(Command::ReplicateMessage, Bytes::from_static(b"1"))
            .await
            .unwrap();
        shutdown.cancel();
        task.await.unwrap();
        // Down: the pooled connection is closed, the request fails.
        assert!(c
            .request(Command::ReplicateMessage, Bytes::from_static(b"2"))
            .await
            .is_err());
        let listener = TcpListener::bind(addr).await.unwrap();
        let shutdown = CancellationToken::new();
        tokio::spawn(serve(listener, None, Arc::new(Echo), shutdown.clone()));
        assert_eq!(
            c.request(Command::ReplicateMessage, Bytes::from_static(b"3"))
                .await
                .unwrap()
                .as_ref(),
            b"3"
        );
        shutdown.cancel();
    }
}
