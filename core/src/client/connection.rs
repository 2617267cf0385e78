//! One broker connection: handshake, AUTH, and correlated requests that may
//! be pipelined.
//!
//! After the handshake the socket is split. A writer task drains an outgoing
//! queue, coalescing frames into few writes; a reader task matches each
//! reply to its pending request by request id. Up to `max_in_flight`
//! requests wait for replies at once; the broker answers them in order.
//! Any framing error or correlation mismatch kills the connection and fails
//! every pending request, since the stream cannot be resynchronised.

use super::frame_sink::FrameSink;
use super::transport::{self, Io};
use crate::config::ClientConfig;
use crate::error::{Error, ErrorKind, Result};
use crate::wire::{
    Command, CommandPayload, ErrorPayload, Frame, FrameCodec, FrameCodecError, Kind,
    NegotiationRequest, NegotiationResponse, Status, WireError,
};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{ReadHalf, WriteHalf};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};
use tokio_util::codec::{Framed, FramedRead};
use tokio_util::sync::CancellationToken;

/// Where a reply goes.
enum Waiter {
    /// A single-frame reply.
    One(oneshot::Sender<Result<Frame>>),
    /// Every frame until STREAM_END or ERROR.
    Stream(mpsc::UnboundedSender<Result<Frame>>),
    /// A two-frame reply (wire-v2.md §8.6): the envelope, then the batch
    /// unless the envelope ends the exchange.
    Pair {
        envelope: Option<Frame>,
        tx: oneshot::Sender<Result<FramePair>>,
    },
}

/// A two-frame reply: the envelope and, unless it ended the exchange, the
/// batch.
type FramePair = (Frame, Option<Frame>);

struct Pending {
    command: Command,
    waiter: Waiter,
    /// The in-flight slot a coalesced request shares with the rest of its
    /// batch (see [`Connection::request_coalesced`]): released once every
    /// request of the batch is answered or forgotten.
    slot: Option<Arc<OwnedSemaphorePermit>>,
}

/// The requests waiting to be sent together (see
/// [`Connection::request_coalesced`]): their ids (registered) and frames.
#[derive(Default)]
struct Coalescing {
    queue: Vec<(u64, Command, Bytes)>,
    /// True while a task is sending the queue.
    draining: bool,
}

/// Most requests one coalesced batch takes (the broker lets a connection
/// have 1,024 replies waiting).
const MAX_COALESCED: usize = 1024;

struct Outgoing {
    frame: Frame,
    written: Option<oneshot::Sender<Result<()>>>,
}

struct Shared {
    addr: String,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    dead: AtomicBool,
    failure: Mutex<Option<Error>>,
    in_flight: Arc<Semaphore>,
    coalescing: Mutex<Coalescing>,
    request_timeout: Duration,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    shutdown: CancellationToken,
    /// Told when the connection fails (not when it is closed).
    on_lost: Option<LossReporter>,
}

/// What a connection calls when it fails (the broker closed it, a read
/// failed, the peer broke the protocol); never for a graceful close.
pub type LossReporter = Box<dyn Fn(Error) + Send + Sync>;

impl Shared {
    /// Marks the connection dead and fails everything waiting on it, then
    /// stops its I/O tasks.
    fn fail(&self, error: Error) {
        if self.close_waiters(error.clone()) {
            self.shutdown.cancel();
            if let Some(report) = &self.on_lost {
                report(
                    Error::new(
                        error.kind(),
                        format!("lost the connection to {}: {}", self.addr, error.message()),
                    )
                    .with_code("connection_lost")
                    .with_field("broker", &self.addr),
                );
            }
        }
    }

    /// A graceful close: everything waiting fails as closed, EXIT goes out
    /// (the broker ends the session on it), then the I/O tasks stop, after
    /// at most [`GOODBYE`]. Without a runtime (a drop on a user thread after
    /// the engine ended, or in a forked child) nobody can write it: stop.
    fn goodbye(&self) {
        if !self.close_waiters(Error::closed("connection")) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return self.shutdown.cancel();
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let exit = CommandPayload::new()
            .to_bytes()
            .map(|payload| Frame::request(Command::Exit, id, payload));
        let queued = exit.is_ok_and(|frame| {
            self.outgoing
                .send(Outgoing {
                    frame,
                    written: None,
                })
                .is_ok()
        });
        if !queued {
            return self.shutdown.cancel();
        }
        let shutdown = self.shutdown.clone();
        runtime.spawn(async move {
            tokio::time::sleep(GOODBYE).await;
            shutdown.cancel();
        });
    }

    /// Marks the connection dead and fails everything waiting on it; false
    /// when it already was.
    fn close_waiters(&self, error: Error) -> bool {
        if self.dead.swap(true, Ordering::SeqCst) {
            return false;
        }
        tracing::debug!(addr = %self.addr, %error, "connection closed");
        *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.clone());
        let pending: Vec<Pending> = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, p)| p)
            .collect();
        for p in pending {
            match p.waiter {
                Waiter::One(tx) => {
                    let _ = tx.send(Err(error.clone()));
                }
                Waiter::Stream(tx) => {
                    let _ = tx.send(Err(error.clone()));
                }
                Waiter::Pair { tx, .. } => {
                    let _ = tx.send(Err(error.clone()));
                }
            }
        }
        self.in_flight.close();
        true
    }

    fn lock_coalescing(&self) -> std::sync::MutexGuard<'_, Coalescing> {
        self.coalescing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers the pending request `id` with `error` (it was never sent).
    fn fail_request(&self, id: u64, error: Error) {
        let entry = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        if let Some(Pending {
            waiter: Waiter::One(tx),
            ..
        }) = entry
        {
            let _ = tx.send(Err(error));
        }
    }

    fn failure(&self) -> Error {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| Error::io(format!("connection to {} is closed", self.addr)))
    }
}

/// How long a graceful close may take to write EXIT before the connection
/// is dropped anyway.
const GOODBYE: Duration = Duration::from_millis(500);

/// Closes the connection when the last [`Connection`] clone goes away (the
/// I/O tasks hold only `Shared`, so they would otherwise live on).
struct CloseOnDrop(Arc<Shared>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.goodbye();
    }
}

/// A live connection to one broker. Cheap to clone; all clones share it,
/// and dropping the last one closes it.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
    _owner: Arc<CloseOnDrop>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("addr", &self.shared.addr)
            .field("alive", &self.is_alive())
            .finish()
    }
}

impl Connection {
    /// Connects, negotiates the configured compression and authenticates,
    /// all within `connect_timeout`.
    pub async fn connect(addr: &str, config: &ClientConfig) -> Result<Connection> {
        Self::connect_reporting(addr, config, None).await
    }

    /// [`connect`](Self::connect), with `on_lost` told when the connection
    /// fails later (see [`LossReporter`]).
    pub async fn connect_reporting(
        addr: &str,
        config: &ClientConfig,
        on_lost: Option<LossReporter>,
    ) -> Result<Connection> {
        let setup = async {
            let io = transport::open(addr, config).await?;
            handshake(io, addr, config).await
        };
        let framed = tokio::time::timeout(config.connect_timeout, setup)
            .await
            .map_err(|_| {
                Error::timeout(format!(
                    "connecting to {addr} took longer than {} ms",
                    config.connect_timeout.as_millis()
                ))
            })??;
        Ok(Self::start(framed, addr, config, on_lost))
    }

    fn start(
        framed: Framed<Box<dyn Io>, FrameCodec>,
        addr: &str,
        config: &ClientConfig,
        on_lost: Option<LossReporter>,
    ) -> Connection {
        let codec = framed.codec().clone();
        let parts = framed.into_parts();
        let (read, write) = tokio::io::split(parts.io);
        let mut reader = FramedRead::new(read, codec.clone());
        *reader.read_buffer_mut() = parts.read_buf;
        let writer = FrameSink::new(write, codec.compression());
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            addr: addr.to_owned(),
            pending: Mutex::new(HashMap::new()),
            // Request id 1 was AUTH's when credentials are configured.
            next_id: AtomicU64::new(2),
            dead: AtomicBool::new(false),
            failure: Mutex::new(None),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight)),
            coalescing: Mutex::new(Coalescing::default()),
            request_timeout: config.request_timeout,
            outgoing: tx,
            shutdown: CancellationToken::new(),
            on_lost,
        });
        tokio::spawn(read_loop(reader, Arc::clone(&shared)));
        tokio::spawn(write_loop(writer, rx, Arc::clone(&shared)));
        Connection {
            _owner: Arc::new(CloseOnDrop(Arc::clone(&shared))),
            shared,
        }
    }

    /// The broker address this connection talks to.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    /// False once the connection failed or was closed.
    pub fn is_alive(&self) -> bool {
        !self.shared.dead.load(Ordering::SeqCst)
    }

    /// Closes the connection gracefully (EXIT, then the socket); pending
    /// requests fail with a `closed` error.
    pub fn close(&self) {
        self.shared.goodbye();
    }

    async fn permit(&self) -> Result<OwnedSemaphorePermit> {
        let wait = Arc::clone(&self.shared.in_flight).acquire_owned();
        match tokio::time::timeout(self.shared.request_timeout, wait).await {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(_)) => Err(self.shared.failure()),
            Err(_) => Err(Error::timeout(format!(
                "no request slot on {} within {} ms",
                self.shared.addr,
                self.shared.request_timeout.as_millis()
            ))),
        }
    }

    fn enqueue(&self, frame: Frame, written: Option<oneshot::Sender<Result<()>>>) -> Result<()> {
        if !self.is_alive() {
            return Err(self.shared.failure());
        }
        self.shared
            .outgoing
            .send(Outgoing { frame, written })
            .map_err(|_| self.shared.failure())
    }

    fn register(&self, command: Command, waiter: Waiter) -> u64 {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                id,
                Pending {
                    command,
                    waiter,
                    slot: None,
                },
            );
        id
    }

    fn forget(&self, id: u64) {
        self.shared
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    /// Sends one request and waits for its reply. A status-ERROR reply
    /// becomes a broker [`Error`]; success returns the reply payload.
    ///
    /// The returned error tells whether the request may have reached the
    /// broker: only an `Io` or `Timeout` error after sending leaves the
    /// outcome unknown.
    pub async fn request(&self, command: Command, payload: Bytes) -> Result<Bytes> {
        self.request_with_timeout(command, payload, self.shared.request_timeout)
            .await
    }

    /// Like [`request`](Self::request) with an explicit deadline (used by
    /// long polls whose broker-side wait exceeds the default).
    pub async fn request_with_timeout(
        &self,
        command: Command,
        payload: Bytes,
        timeout: Duration,
    ) -> Result<Bytes> {
        let (tx, rx) = oneshot::channel();
        let reply = self
            .exchange(command, payload, Waiter::One(tx), rx, timeout)
            .await?;
        into_result(reply)
    }

    /// Sends a request answered with two frames and waits for both (or for
    /// an envelope that ends the exchange: a status-ERROR frame or a JSON
    /// `"status":"ERROR"` envelope). Returns the payloads; a status-ERROR
    /// frame becomes a broker [`Error`].
    pub async fn request_pair(
        &self,
        command: Command,
        payload: Bytes,
        timeout: Duration,
    ) -> Result<(Bytes, Option<Bytes>)> {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter::Pair { envelope: None, tx };
        let (envelope, batch) = self.exchange(command, payload, waiter, rx, timeout).await?;
        Ok((into_result(envelope)?, batch.map(|f| f.payload)))
    }

    /// Registers `waiter`, sends the request and waits at most `timeout`
    /// for what the reader hands to `rx`. A reply that comes after the
    /// deadline finds no waiter and is dropped.
    async fn exchange<T>(
        &self,
        command: Command,
        payload: Bytes,
        waiter: Waiter,
        rx: oneshot::Receiver<Result<T>>,
        timeout: Duration,
    ) -> Result<T> {
        let _permit = self.permit().await?;
        let id = self.register(command, waiter);
        if let Err(e) = self.enqueue(Frame::request(command, id, payload), None) {
            self.forget(id);
            return Err(e);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => Err(self.shared.failure()),
            Err(_) => Err(self.no_reply(command, id, timeout)),
        }
    }

    /// Gives up on request `id` (a reply that still comes is dropped) and
    /// returns the timeout error that names `timeout`.
    fn no_reply(&self, command: Command, id: u64, timeout: Duration) -> Error {
        self.forget(id);
        Error::timeout(format!(
            "{command} to {} got no reply within {} ms",
            self.shared.addr,
            timeout.as_millis()
        ))
    }

    /// Sends one request of `command` per payload, back to back, and returns
    /// each reply (or its error) in order, waiting at most `timeout` for
    /// all of them.
    ///
    /// The requests share one in-flight slot: a batch of single-record
    /// commands (TXN_PUBLISH) counts against `max_in_flight` as one request,
    /// as a PUBLISH batch does, so the broker sees the whole batch at once
    /// and its appends share fsyncs. The broker answers in arrival order
    /// (wire-v2.md, pipelining), so an error reply says nothing about the
    /// requests after it: each has its own result.
    pub async fn request_pipelined(
        &self,
        command: Command,
        payloads: &[Bytes],
        timeout: Duration,
    ) -> Vec<Result<Bytes>> {
        let deadline = tokio::time::Instant::now() + timeout;
        let _permit = match self.permit().await {
            Ok(p) => p,
            Err(e) => return payloads.iter().map(|_| Err(e.clone())).collect(),
        };
        let mut waiting = Vec::with_capacity(payloads.len());
        for payload in payloads {
            let (tx, rx) = oneshot::channel();
            let id = self.register(command, Waiter::One(tx));
            match self.enqueue(Frame::request(command, id, payload.clone()), None) {
                Ok(()) => waiting.push(Ok((id, rx))),
                Err(e) => {
                    self.forget(id);
                    waiting.push(Err(e));
                }
            }
        }
        let mut replies = Vec::with_capacity(waiting.len());
        for entry in waiting {
            let reply = match entry {
                Err(e) => Err(e),
                Ok((id, rx)) => match tokio::time::timeout_at(deadline, rx).await {
                    Ok(Ok(reply)) => reply.and_then(into_result),
                    Ok(Err(_)) => Err(self.shared.failure()),
                    Err(_) => Err(self.no_reply(command, id, timeout)),
                },
            };
            replies.push(reply);
        }
        replies
    }

    /// Sends one request together with the other requests callers hand
    /// this connection meanwhile, and waits at most `timeout` for its reply
    /// once sent (as [`request_with_timeout`](Self::request_with_timeout)).
    ///
    /// Requests that arrive while every in-flight slot is taken queue up,
    /// and the next free slot sends all of them back to back (at most
    /// 1,024) as one batch, as [`request_pipelined`](Self::request_pipelined)
    /// does: concurrent single-record commands (APPEND_STREAM from many
    /// tasks) then reach the broker as a run it appends in one write and
    /// one sync per partition, instead of `max_in_flight` at a time. Each
    /// request keeps its own reply; the broker answers in arrival order.
    pub async fn request_coalesced(
        &self,
        command: Command,
        payload: Bytes,
        timeout: Duration,
    ) -> Result<Bytes> {
        if !self.is_alive() {
            return Err(self.shared.failure());
        }
        let (tx, rx) = oneshot::channel();
        let id = self.register(command, Waiter::One(tx));
        let drain = {
            let mut c = self.shared.lock_coalescing();
            c.queue.push((id, command, payload));
            !std::mem::replace(&mut c.draining, true)
        };
        if drain {
            tokio::spawn(self.clone().drain_coalesced());
        }
        // The wait for a slot (at most the request timeout), then for the
        // reply: the bound of `request_with_timeout`.
        match tokio::time::timeout(self.shared.request_timeout + timeout, rx).await {
            Ok(Ok(reply)) => into_result(reply?),
            Ok(Err(_)) => Err(self.shared.failure()),
            Err(_) => Err(self.no_reply(command, id, timeout)),
        }
    }

    /// Sends the coalescing queue batch by batch, one in-flight slot each,
    /// until it is empty.
    async fn drain_coalesced(self) {
        loop {
            let slot = match self.permit().await {
                Ok(p) => Arc::new(p),
                Err(e) => {
                    let queued = {
                        let mut c = self.shared.lock_coalescing();
                        c.draining = false;
                        std::mem::take(&mut c.queue)
                    };
                    for (id, ..) in queued {
                        self.shared.fail_request(id, e.clone());
                    }
                    return;
                }
            };
            let batch: Vec<_> = {
                let mut c = self.shared.lock_coalescing();
                if c.queue.is_empty() {
                    c.draining = false;
                    return;
                }
                let n = c.queue.len().min(MAX_COALESCED);
                c.queue.drain(..n).collect()
            };
            // The batch's requests hold the slot until each is answered
            // (or forgotten after its timeout); one forgotten already is
            // not sent.
            let batch: Vec<_> = {
                let mut pending = self
                    .shared
                    .pending
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                batch
                    .into_iter()
                    .filter(|(id, ..)| match pending.get_mut(id) {
                        Some(p) => {
                            p.slot = Some(Arc::clone(&slot));
                            true
                        }
                        None => false,
                    })
                    .collect()
            };
            drop(slot);
            for (id, command, payload) in batch {
                if let Err(e) = self.enqueue(Frame::request(command, id, payload), None) {
                    self.shared.fail_request(id, e);
                }
            }
        }
    }

    /// Sends a request the broker does not answer (PUBLISH with acks=0) and
    /// returns once it has been written to the socket.
    pub async fn send_without_reply(&self, command: Command, payload: Bytes) -> Result<()> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.enqueue(Frame::request(command, id, payload), Some(tx))?;
        match tokio::time::timeout(self.shared.request_timeout, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(self.shared.failure()),
            Err(_) => Err(Error::timeout(format!(
                "writing {command} to {} timed out",
                self.shared.addr
            ))),
        }
    }

    /// Starts a STREAM-like request and returns every frame of its reply.
    /// The broker stops reading requests on the connection afterwards, so the
    /// caller must dedicate this connection to the stream.
    pub fn open_stream(&self, command: Command, payload: Bytes) -> Result<FrameStream> {
        let (tx, rx) = mpsc::unbounded_channel();
        let id = self.register(command, Waiter::Stream(tx));
        if let Err(e) = self.enqueue(Frame::request(command, id, payload), None) {
            self.forget(id);
            return Err(e);
        }
        Ok(FrameStream {
            rx,
            connection: self.clone(),
        })
    }
}

/// The frames of one streamed reply. Dropping it closes the connection.
pub struct FrameStream {
    rx: mpsc::UnboundedReceiver<Result<Frame>>,
    connection: Connection,
}

impl FrameStream {
    /// The next frame; `None` after STREAM_END or an error was delivered.
    pub async fn next(&mut self) -> Option<Result<Frame>> {
        self.rx.recv().await
    }
}

impl Drop for FrameStream {
    fn drop(&mut self) {
        self.connection.close();
    }
}

/// Turns a reply frame into its payload or the broker error it carries.
fn into_result(frame: Frame) -> Result<Bytes> {
    match frame.status {
        Status::Error => Err(ErrorPayload::decode(frame.payload)
            .map(Error::from)
            .unwrap_or_else(|e| Error::protocol(format!("undecodable error payload: {e}")))),
        _ => Ok(frame.payload),
    }
}

/// Negotiates compression and sends AUTH when credentials are configured.
async fn handshake(
    io: Box<dyn Io>,
    addr: &str,
    config: &ClientConfig,
) -> Result<Framed<Box<dyn Io>, FrameCodec>> {
    let mut framed = Framed::new(io, FrameCodec::new());
    let offer = NegotiationRequest::for_compression(config.compression);
    framed
        .send(Frame::negotiation_request(offer.encode()?))
        .await
        .map_err(|e| Error::io(format!("handshake with {addr} failed: {e}")))?;
    let reply = next_frame(&mut framed, addr).await?;
    if reply.kind != Kind::NegotiationResponse || reply.status != Status::Ok {
        return Err(Error::protocol(format!(
            "{addr} answered the handshake with a {} frame, status {}",
            reply.kind, reply.status
        )));
    }
    let chosen = NegotiationResponse::decode(reply.payload)?;
    chosen.check_against(&offer)?;
    framed.codec_mut().set_compression(chosen.compression);
    if let Some(c) = &config.credentials {
        let payload = CommandPayload::new()
            .field("principal", &c.principal)
            .field("token", &c.token)
            .to_bytes()?;
        framed
            .send(Frame::request(Command::Auth, 1, payload))
            .await
            .map_err(|e| Error::io(format!("AUTH to {addr} failed: {e}")))?;
        let reply = next_frame(&mut framed, addr).await?;
        let text = into_result(reply)?;
        if !text.starts_with(b"OK") {
            return Err(Error::protocol(format!(
                "{addr} answered AUTH with {:?}",
                String::from_utf8_lossy(&text)
            )));
        }
    }
    Ok(framed)
}

async fn next_frame(framed: &mut Framed<Box<dyn Io>, FrameCodec>, addr: &str) -> Result<Frame> {
    match framed.next().await {
        Some(Ok(f)) => Ok(f),
        Some(Err(e)) => Err(handshake_garbage(addr, &e)),
        None => Err(Error::io(format!(
            "{addr} closed the connection during the handshake"
        ))),
    }
}

/// What a reply that is not a frame means. An HTTP server (the broker's
/// health port, a proxy) answers the handshake with `HTTP/1.1 ...`, whose
/// first four bytes are read as a frame magic: say so plainly.
fn handshake_garbage(addr: &str, e: &FrameCodecError) -> Error {
    let http = u32::from_be_bytes(*b"HTTP");
    match e {
        FrameCodecError::Wire(WireError::BadMagic(m)) if *m == http => Error::protocol(format!(
            "received HTTP, not Cursus Wire v2, from {addr}: is this the health port? \
             Point bootstrap_servers at the broker's client listener"
        ))
        .with_code("not_cursus_wire"),
        // TLS 1.3 reports a refused client certificate as an alert on the
        // first read after the handshake: this one.
        FrameCodecError::Io(io) if transport::tls_error_in(io) => {
            transport::tls_failure(addr, transport::host_of(addr), io)
        }
        // The transport failed (a reset, say): the broker is unavailable,
        // not speaking another protocol.
        FrameCodecError::Io(io) => Error::io(format!("{addr} failed during the handshake: {io}")),
        // TLS records (alert 0x15, handshake 0x16, version 3.x) where a
        // frame should start: a TLS listener answering a plain client.
        FrameCodecError::Wire(WireError::BadMagic(m)) if matches!(m >> 16, 0x1503 | 0x1603) => {
            Error::protocol(format!(
                "{addr} answered in TLS, not plain Cursus Wire v2: \
                 set tls=true (and tls_ca_file) to connect to a TLS listener"
            ))
            .with_code("not_cursus_wire")
        }
        FrameCodecError::Wire(_) => Error::protocol(format!("bad frame from {addr}: {e}")),
    }
}

async fn read_loop(mut reader: FramedRead<ReadHalf<Box<dyn Io>>, FrameCodec>, shared: Arc<Shared>) {
    loop {
        let next = tokio::select! {
            next = reader.next() => next,
            _ = shared.shutdown.cancelled() => return,
        };
        let frame = match next {
            Some(Ok(frame)) => frame,
            Some(Err(e)) => {
                let kind = match e {
                    crate::wire::FrameCodecError::Io(_) => ErrorKind::Io,
                    crate::wire::FrameCodecError::Wire(_) => ErrorKind::Protocol,
                };
                return shared.fail(Error::new(
                    kind,
                    format!("reading from {}: {e}", shared.addr),
                ));
            }
            None => {
                return shared.fail(Error::io(format!("{} closed the connection", shared.addr)))
            }
        };
        if let Err(e) = deliver(&shared, frame) {
            return shared.fail(e);
        }
    }
}

/// Routes one reply frame to its waiter.
fn deliver(shared: &Shared, frame: Frame) -> Result<()> {
    if !matches!(frame.kind, Kind::Response | Kind::Stream) {
        return Err(Error::protocol(format!(
            "{} sent an unexpected {} frame",
            shared.addr, frame.kind
        )));
    }
    let mut pending = shared.pending.lock().unwrap_or_else(|p| p.into_inner());
    let Some(entry) = pending.get_mut(&frame.request_id) else {
        // A reply to a request that timed out and was forgotten.
        tracing::debug!(addr = %shared.addr, id = frame.request_id, "dropping reply to a forgotten request");
        return Ok(());
    };
    if entry.command != frame.command {
        return Err(Error::protocol(format!(
            "{} answered request {} ({}) with command {}",
            shared.addr, frame.request_id, entry.command, frame.command
        )));
    }
    let terminal = matches!(frame.status, Status::StreamEnd | Status::Error);
    match &mut entry.waiter {
        Waiter::Stream(tx) if !terminal => {
            let _ = tx.send(Ok(frame));
        }
        Waiter::Pair { envelope, .. }
            if envelope.is_none() && !terminal && !is_error_envelope(&frame.payload) =>
        {
            // The batch follows.
            *envelope = Some(frame);
        }
        _ => {
            if let Some(p) = pending.remove(&frame.request_id) {
                match p.waiter {
                    Waiter::One(tx) => {
                        let _ = tx.send(Ok(frame));
                    }
                    Waiter::Stream(tx) => {
                        let _ = tx.send(Ok(frame));
                    }
                    Waiter::Pair { envelope, tx } => {
                        let reply = match envelope {
                            Some(first) => (first, Some(frame)),
                            None => (frame, None),
                        };
                        let _ = tx.send(Ok(reply));
                    }
                }
            }
        }
    }
    Ok(())
}

/// True for a two-frame exchange's JSON error envelope
/// (`{"status":"ERROR",…}`), after which no batch follows.
fn is_error_envelope(payload: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        status: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_slice::<Envelope<'_>>(payload)
        .ok()
        .and_then(|e| e.status)
        .is_some_and(|s| s.eq_ignore_ascii_case("error"))
}

async fn write_loop(
    mut writer: FrameSink<WriteHalf<Box<dyn Io>>>,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    shared: Arc<Shared>,
) {
    let mut notify = Vec::new();
    loop {
        let first = tokio::select! {
            first = rx.recv() => first,
            _ = shared.shutdown.cancelled() => None,
        };
        let Some(first) = first else {
            let _ = writer.close().await;
            return;
        };
        // Coalesce whatever is queued into one flush.
        let mut batch = vec![first];
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
            if batch.len() >= 256 {
                break;
            }
        }
        // After a graceful close only EXIT still goes out: a request whose
        // caller was already told "closed" must not reach the broker.
        let closing = shared.dead.load(Ordering::SeqCst);
        let exit = batch.iter().any(|out| out.frame.command == Command::Exit);
        let write = async {
            let mut result = Ok(());
            for out in batch {
                if closing && out.frame.command != Command::Exit {
                    continue;
                }
                if result.is_ok() {
                    result = writer.feed(&out.frame).await;
                }
                notify.extend(out.written);
            }
            if result.is_ok() {
                result = writer.flush().await;
            }
            result
        };
        // A stuck write must not outlive the connection.
        let result = tokio::select! {
            result = write => result,
            _ = shared.shutdown.cancelled() => return,
        };
        match result {
            Ok(()) if exit => {
                let _ = writer.close().await;
                shared.shutdown.cancel();
                return;
            }
            Ok(()) => {
                for tx in notify.drain(..) {
                    let _ = tx.send(Ok(()));
                }
            }
            Err(e) => {
                let error = Error::io(format!("writing to {}: {e}", shared.addr));
                for tx in notify.drain(..) {
                    let _ = tx.send(Err(error.clone()));
                }
                return shared.fail(error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// A broker stand-in that negotiates, then reads `batch` requests
    /// before it answers any of them (each with its request id as text),
    /// in order.
    async fn answer_after(batch: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (socket, _) = listener.accept().await.unwrap();
            let mut framed = Framed::new(socket, FrameCodec::new());
            let offer = framed.next().await.unwrap().unwrap();
            let chosen = NegotiationRequest::decode(offer.payload)
                .unwrap()
                .select()
                .unwrap();
            framed
                .send(Frame::negotiation_response(chosen.encode()))
                .await
                .unwrap();
            framed.codec_mut().set_compression(chosen.compression);
            let mut requests = Vec::new();
            while requests.len() < batch {
                requests.push(framed.next().await.unwrap().unwrap());
            }
            for r in requests {
                let text = Bytes::from(format!("OK id={}", r.request_id));
                let reply = Frame::response(r.command, r.request_id, Status::Ok, text);
                framed.send(reply).await.unwrap();
            }
            // Hold the connection until the client is done.
            let _ = framed.next().await;
        });
        addr
    }

    /// A pipelined batch takes one in-flight slot: with `max_in_flight=1`
    /// every request of it still reaches the broker before any reply, and
    /// each reply comes back to its own request.
    #[tokio::test]
    async fn a_pipelined_batch_takes_one_in_flight_slot() {
        let addr = answer_after(20).await;
        let mut config = ClientConfig::new(&addr);
        config.max_in_flight = 1;
        config.request_timeout = Duration::from_secs(10);
        let conn = Connection::connect(&addr, &config).await.unwrap();
        let payloads: Vec<Bytes> = (0..20).map(|i| Bytes::from(format!("r{i}"))).collect();
        let replies = conn
            .request_pipelined(Command::TxnPublish, &payloads, Duration::from_secs(10))
            .await;
        assert_eq!(replies.len(), 20);
        assert_one_reply_each_in_order(replies, 20);
    }

    /// Requests handed to the connection while its only in-flight slot
    /// would be taken go out together: all 20 reach the broker before any
    /// reply, and each reply comes back to its own request.
    #[tokio::test]
    async fn coalesced_requests_share_one_in_flight_slot() {
        let addr = answer_after(20).await;
        let mut config = ClientConfig::new(&addr);
        config.max_in_flight = 1;
        config.request_timeout = Duration::from_secs(10);
        let conn = Connection::connect(&addr, &config).await.unwrap();
        let requests = (0..20).map(|i| {
            let conn = conn.clone();
            async move {
                let payload = Bytes::from(format!("r{i}"));
                let timeout = Duration::from_secs(10);
                conn.request_coalesced(Command::AppendStream, payload, timeout)
                    .await
            }
        });
        let replies = futures_util::future::join_all(requests).await;
        assert_one_reply_each_in_order(replies, 20);
    }

    /// The replies of [`answer_after`] (each its request's id) are `n`
    /// distinct ids in ascending order: every request got its own reply,
    /// in the order the requests were sent.
    fn assert_one_reply_each_in_order(replies: Vec<Result<Bytes>>, n: usize) {
        let ids: Vec<u64> = replies
            .into_iter()
            .map(|r| {
                let text = String::from_utf8(r.unwrap().to_vec()).unwrap();
                text.strip_prefix("OK id=").unwrap().parse().unwrap()
            })
            .collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            (ids.clone(), ids.len()),
            (sorted, n),
            "one reply each, in order"
        );
    }
}
