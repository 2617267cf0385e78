//! One client connection: the Wire v2 handshake, then requests answered
//! strictly in arrival order.
//!
//! A reader task decodes frames into a bounded queue while the current
//! request runs, so clients may pipeline. Anything that is not a valid
//! request (bad frame, a second negotiation, a batch under a command other
//! than PUBLISH, a payload that is neither CBV2 nor CRQ2) closes the
//! connection without a reply (§9). Idle connections are never dropped.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use cursus_wire::{
    Batch, Command, CommandPayload, Compression, ErrorPayload, Frame, FrameCodec, FrameCodecError,
    Kind, NegotiationRequest, Status,
};
use futures_util::{FutureExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;
use tokio_util::codec::FramedRead;
use tracing::debug;

use crate::auth::{Admission, Session};
use crate::broker::{Broker, Listener};
use crate::commands::deadline::{self, Deadline};
use crate::commands::{self, stream, Reply, Request};
use crate::metrics::Metrics;
use crate::server::counting::Counted;

/// Frames decoded ahead of the running request (the byte budget below is
/// the real bound; a transaction's pipelined records, one frame each, are
/// taken together up to this many).
const READ_AHEAD: usize = 1024;

/// Payload bytes the reader may hold decoded ahead of the running request;
/// bounds a pipelining client's memory (a single frame of up to 64 MiB is
/// always admitted).
const READ_AHEAD_BYTES: usize = 64 << 20;

/// Largest payload [`FrameWriter::send`] copies next to its header so the
/// frame goes out in a single write.
const COPY_LIMIT: usize = 16 * 1024;

/// Extra time a CONSUME may take beyond the request timeout: its long poll.
const LONG_POLL_ALLOWANCE: Duration = Duration::from_millis(crate::commands::consume::MAX_WAIT_MS);

/// What the reader task hands over: a frame with its share of the
/// read-ahead budget (released when dropped), or the error that ends the
/// connection.
pub type Inbound = Result<(Frame, OwnedSemaphorePermit), FrameCodecError>;

/// The read half of a connection, plain or TLS.
pub type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;

/// The write half of a connection, plain or TLS.
pub type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// An accepted socket and how to speak on it.
pub enum Transport {
    /// Wire v2 straight on TCP.
    Plain(TcpStream),
    /// Wire v2 inside TLS, after a handshake with this acceptor.
    Tls(TcpStream, TlsAcceptor),
}

/// Writes frames contiguously with the connection's negotiated compression.
pub struct FrameWriter {
    half: WriteHalf,
    compression: Compression,
    buf: BytesMut,
    /// Small frames wait in `buf` until [`uncork`](Self::uncork).
    corked: bool,
}

/// Most bytes a corked writer holds before it writes them anyway.
const CORK_LIMIT: usize = 256 * 1024;

impl std::fmt::Debug for FrameWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameWriter")
            .field("compression", &self.compression)
            .finish_non_exhaustive()
    }
}

impl FrameWriter {
    fn new(half: WriteHalf) -> Self {
        FrameWriter {
            half,
            compression: Compression::None,
            buf: BytesMut::new(),
            corked: false,
        }
    }

    /// Encodes and writes one frame. Small frames go out in one write; a
    /// large payload (a CONSUME batch) is written straight from its buffer
    /// after the header instead of being copied next to it first.
    pub async fn send(&mut self, frame: &Frame) -> io::Result<()> {
        let (header, payload) = frame
            .encode_parts(self.compression)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if payload.len() > COPY_LIMIT {
            self.write_queued().await?;
            self.half.write_all(&header).await?;
            return self.half.write_all(&payload).await;
        }
        self.buf.extend_from_slice(&header);
        self.buf.extend_from_slice(&payload);
        if self.corked && self.buf.len() < CORK_LIMIT {
            return Ok(());
        }
        self.write_queued().await
    }

    /// Holds small frames back until [`uncork`](Self::uncork), so replies
    /// that are ready together go out in one write.
    pub fn cork(&mut self) {
        self.corked = true;
    }

    /// Writes the frames held back since [`cork`](Self::cork).
    pub async fn uncork(&mut self) -> io::Result<()> {
        self.corked = false;
        self.write_queued().await
    }

    async fn write_queued(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let written = self.half.write_all(&self.buf).await;
        self.buf.clear();
        written
    }

    /// Flushes and half-closes the socket.
    pub async fn shutdown(&mut self) {
        let _ = self.half.shutdown().await;
    }
}

/// Serves one accepted connection; `_permit` holds its connection slot.
pub async fn handle(
    broker: Arc<Broker>,
    transport: Transport,
    peer: SocketAddr,
    _permit: OwnedSemaphorePermit,
) {
    let listener = match transport {
        Transport::Plain(_) => Listener::Plain,
        Transport::Tls(..) => Listener::Tls,
    };
    let _open = broker.metrics.connection_opened(listener);
    // The TLS handshake and the Wire v2 negotiation share one deadline.
    let deadline = broker.config.handshake_timeout();
    let opened = open(transport, peer, &broker.metrics);
    let Ok(opened) = tokio::time::timeout(deadline, opened).await else {
        debug!(%peer, "handshake timed out");
        return;
    };
    let Some(negotiated) = opened else {
        return;
    };
    debug!(%peer, compression = %negotiated.2, "negotiated");
    run(&broker, listener, negotiated).await;
    debug!(%peer, "connection closed");
}

/// Serves one connection over any byte stream, as the plain listener
/// would: the Wire v2 negotiation within the handshake deadline, then
/// requests until the client closes or the broker shuts down. In-process
/// tests and fuzzing (see [`crate::fuzzing`]) reach the broker here.
pub async fn serve_io(broker: Arc<Broker>, read: ReadHalf, write: WriteHalf) {
    let deadline = broker.config.handshake_timeout();
    let _open = broker.metrics.connection_opened(Listener::Plain);
    let negotiated = negotiate(read, write, &broker.metrics);
    if let Ok(Some(negotiated)) = tokio::time::timeout(deadline, negotiated).await {
        run(&broker, Listener::Plain, negotiated).await;
    }
}

/// A negotiated connection: its frames, its writer and the compression.
type Negotiated = (FramedRead<ReadHalf, FrameCodec>, FrameWriter, Compression);

/// Requests after the negotiation, until the connection ends.
async fn run(broker: &Arc<Broker>, listener: Listener, negotiated: Negotiated) {
    let (mut frames, mut writer, compression) = negotiated;
    frames.decoder_mut().set_compression(compression);
    writer.compression = compression;
    let (tx, rx) = mpsc::channel(READ_AHEAD);
    let reader = tokio::spawn(read_frames(frames, tx));
    serve(broker, listener, &mut writer, rx).await;
    reader.abort();
    writer.shutdown().await;
}

/// The TLS handshake (for a TLS connection), then the Wire v2
/// negotiation; `None` means close without a reply.
async fn open(transport: Transport, peer: SocketAddr, metrics: &Metrics) -> Option<Negotiated> {
    let (read, write): (ReadHalf, WriteHalf) = match transport {
        Transport::Plain(socket) => {
            let _ = socket.set_nodelay(true);
            let (read, write) = socket.into_split();
            (Box::new(read), Box::new(write))
        }
        Transport::Tls(socket, acceptor) => {
            let _ = socket.set_nodelay(true);
            match acceptor.accept(socket).await {
                Ok(stream) => {
                    let (read, write) = tokio::io::split(stream);
                    (Box::new(read), Box::new(write))
                }
                Err(e) => {
                    // Includes a plaintext client on the TLS port.
                    debug!(%peer, error = %e, "TLS handshake failed; closing");
                    return None;
                }
            }
        }
    };
    let negotiated = negotiate(read, write, metrics).await;
    if negotiated.is_none() {
        // Includes a TLS client on the plain port.
        debug!(%peer, "handshake rejected");
    }
    negotiated
}

/// The Wire v2 negotiation on a byte stream, whose traffic counts into
/// `metrics` from here on; `None` means close.
async fn negotiate(read: ReadHalf, write: WriteHalf, metrics: &Metrics) -> Option<Negotiated> {
    let read: ReadHalf = Box::new(Counted::new(read, metrics.received_bytes()));
    let write: WriteHalf = Box::new(Counted::new(write, metrics.sent_bytes()));
    let mut frames = FramedRead::new(read, FrameCodec::new());
    let mut writer = FrameWriter::new(write);
    let compression = handshake(&mut frames, &mut writer).await?;
    Some((frames, writer, compression))
}

/// Runs the handshake; `None` means close without a reply (§4.4).
async fn handshake(
    frames: &mut FramedRead<ReadHalf, FrameCodec>,
    writer: &mut FrameWriter,
) -> Option<Compression> {
    let frame = frames.next().await?.ok()?;
    if frame.kind != Kind::NegotiationRequest {
        return None;
    }
    let response = NegotiationRequest::decode(frame.payload)
        .ok()?
        .select()
        .ok()?;
    writer
        .send(&Frame::negotiation_response(response.encode()))
        .await
        .ok()?;
    Some(response.compression)
}

/// The reader task: decodes frames until EOF, a framing error (forwarded,
/// then stop) or the connection task going away.
async fn read_frames(mut frames: FramedRead<ReadHalf, FrameCodec>, tx: mpsc::Sender<Inbound>) {
    let budget = Arc::new(Semaphore::new(READ_AHEAD_BYTES));
    while let Some(item) = frames.next().await {
        let item = match item {
            Ok(frame) => {
                let cost = frame.payload.len().clamp(1, READ_AHEAD_BYTES) as u32;
                let Ok(permit) = Arc::clone(&budget).acquire_many_owned(cost).await else {
                    break;
                };
                Ok((frame, permit))
            }
            Err(e) => Err(e),
        };
        let fatal = item.is_err();
        if tx.send(item).await.is_err() || fatal {
            break;
        }
    }
}

/// How a request frame is to be handled.
enum Decoded {
    Request(Request),
    /// Reply with this error, then close.
    Reject(ErrorPayload),
    /// Close without a reply.
    Close,
}

/// Validates and decodes a request frame (§9 "Invalid input").
fn decode(frame: &Frame) -> Decoded {
    if frame.kind != Kind::Request || frame.command == Command::Negotiate {
        return Decoded::Close;
    }
    if Batch::is_batch(&frame.payload) {
        if frame.command != Command::Publish {
            return Decoded::Close;
        }
        return match Batch::decode(frame.payload.clone()) {
            Ok(batch) => Decoded::Request(Request::Batch(batch)),
            Err(_) => Decoded::Close,
        };
    }
    let Ok(payload) = CommandPayload::decode(frame.payload.clone()) else {
        return Decoded::Close;
    };
    // Handlers read the rendered line, exactly as the reference broker does.
    let line = payload.render_line(frame.command);
    match CommandPayload::parse_line(&line) {
        Ok((command, payload)) => Decoded::Request(Request::Command { command, payload }),
        Err(_) => Decoded::Reject(
            ErrorPayload::new("malformed_input").with_field("reason", "command_payload_required"),
        ),
    }
}

/// Most replies a connection may have waiting on durability at once
/// ([`Reply::Deferred`]) before it stops reading further requests.
const MAX_DEFERRED: usize = 1024;

/// A reply that is waiting for its request's durability, in arrival order.
/// The [`Instant`] is when the request was taken up.
type Waiting =
    std::pin::Pin<Box<dyn std::future::Future<Output = (Command, u64, Instant, Reply)> + Send>>;

/// The request loop: one request at a time, replies in arrival order.
///
/// A handler runs to completion before the next request starts, so
/// requests take effect in order. A [`Reply::Deferred`] (an append waiting
/// for its fsync) does not hold the next request back: its reply waits in
/// `waiting`, and every later reply is written after it, so a pipelining
/// client's appends share fsyncs while replies keep their order.
async fn serve(
    broker: &Arc<Broker>,
    listener: Listener,
    writer: &mut FrameWriter,
    mut rx: mpsc::Receiver<Inbound>,
) {
    let mut waiting: futures_util::stream::FuturesOrdered<Waiting> = Default::default();
    // Who this connection authenticated as, and its failed attempts.
    let mut session = Session::default();
    // A request read ahead of its turn (see `read_ahead`).
    let mut peeked: Option<Inbound> = None;
    loop {
        let item = tokio::select! {
            biased;
            Some((command, id, started, reply)) = waiting.next(), if !waiting.is_empty() => {
                // Every reply that is ready now goes out in one write (a
                // pipelined batch's appends become durable together).
                writer.cork();
                let mut open = write_reply(broker, writer, &mut rx, (command, id, started), reply).await;
                while open {
                    let Some(Some((command, id, started, reply))) = waiting.next().now_or_never() else {
                        break;
                    };
                    open = write_reply(broker, writer, &mut rx, (command, id, started), reply).await;
                }
                if writer.uncork().await.is_err() || !open {
                    return;
                }
                continue;
            }
            item = next_inbound(&mut peeked, &mut rx), if waiting.len() < MAX_DEFERRED => item,
            _ = broker.shutdown.cancelled() => return,
        };
        // The permit is held until this request is answered.
        let (frame, permit) = match item {
            Some(Ok(entry)) => entry,
            Some(Err(e)) => {
                debug!(error = %e, "invalid frame; closing");
                flush_waiting(broker, writer, &mut rx, &mut waiting).await;
                return;
            }
            None => {
                flush_waiting(broker, writer, &mut rx, &mut waiting).await;
                return;
            }
        };
        let (id, command, started) = (frame.request_id, frame.command, Instant::now());
        let request = match decode(&frame) {
            Decoded::Request(r) => {
                broker.metrics.request(command);
                r
            }
            Decoded::Reject(e) => {
                broker.metrics.request(command);
                broker.metrics.error(command, &e.code);
                if flush_waiting(broker, writer, &mut rx, &mut waiting).await {
                    let _ = writer.send(&error_frame(command, id, &e)).await;
                }
                return;
            }
            Decoded::Close => {
                debug!(%command, "invalid request; closing");
                flush_waiting(broker, writer, &mut rx, &mut waiting).await;
                return;
            }
        };
        // AUTH and authorization come before any handler validation.
        let request = match session.admit(broker, request) {
            Admission::Run(request) => request,
            Admission::Answer(reply) => {
                drop(permit);
                if !flush_waiting(broker, writer, &mut rx, &mut waiting).await
                    || !write_reply(broker, writer, &mut rx, (command, id, started), reply).await
                {
                    return;
                }
                continue;
            }
        };
        // Only appends overlap with the durability wait of earlier appends;
        // any other request first waits for those replies, so a connection
        // always reads its own acknowledged writes.
        if !matches!(
            command,
            Command::Publish | Command::AppendStream | Command::TxnPublish
        ) && !flush_waiting(broker, writer, &mut rx, &mut waiting).await
        {
            return;
        }
        let request = match request {
            Request::Command {
                command: command @ (Command::TxnPublish | Command::AppendStream),
                payload,
            } if !broker.faults.configured(command) => {
                let first = Pipelined {
                    id,
                    started,
                    permit,
                    admitted: Ok(payload),
                };
                let room = MAX_DEFERRED.saturating_sub(waiting.len());
                let batch = read_ahead(
                    broker,
                    &mut session,
                    (&mut rx, &mut peeked),
                    command,
                    first,
                    room,
                );
                run_pipelined(broker, listener, command, batch, &mut waiting).await;
                continue;
            }
            other => other,
        };
        let limit = match command {
            Command::Consume => broker.config.request_timeout + LONG_POLL_ALLOWANCE,
            _ => broker.config.request_timeout,
        };
        // The handler and the timeout race on the request's point of no
        // return (see `commands::deadline`).
        let deadline = Deadline::new();
        let dispatch = commands::dispatch(broker, request, listener);
        let reply =
            match tokio::time::timeout(limit, deadline::scope(deadline.clone(), dispatch)).await {
                Ok(reply) => reply,
                Err(_) => Reply::Error(deadline.expire().error()),
            };
        if let Reply::Deferred(_) = reply {
            let answering = (command, id, started);
            waiting.push_back(in_turn(answering, permit, limit, deadline, reply));
            continue;
        }
        drop(permit);
        // Earlier replies still waiting go first.
        if !flush_waiting(broker, writer, &mut rx, &mut waiting).await
            || !write_reply(broker, writer, &mut rx, (command, id, started), reply).await
        {
            return;
        }
    }
}

/// The next request: the one read ahead, if any, else the next from the
/// reader.
async fn next_inbound(
    peeked: &mut Option<Inbound>,
    rx: &mut mpsc::Receiver<Inbound>,
) -> Option<Inbound> {
    match peeked.take() {
        Some(item) => Some(item),
        None => rx.recv().await,
    }
}

/// `reply` (deferred or not) as a waiting reply: written in its turn,
/// holding the request's permit until then. A deferred reply still
/// waiting for durability after `limit` becomes `request_timeout` with
/// outcome `unknown` (it was applied).
fn in_turn(
    answering: Answering,
    permit: OwnedSemaphorePermit,
    limit: Duration,
    deadline: Deadline,
    reply: Reply,
) -> Waiting {
    let (command, id, started) = answering;
    Box::pin(async move {
        let _permit = permit;
        let reply = match reply {
            Reply::Deferred(durable) => match tokio::time::timeout(limit, durable).await {
                Ok(reply) => reply,
                Err(_) => Reply::Error(deadline.expire().error()),
            },
            ready => ready,
        };
        (command, id, started, reply)
    })
}

/// One request of a pipelined run (TXN_PUBLISH or APPEND_STREAM): its
/// request id, when it was taken up, its permit, and its payload once
/// admitted (or the answer the session gave it instead).
struct Pipelined {
    id: u64,
    started: Instant,
    permit: OwnedSemaphorePermit,
    admitted: Result<CommandPayload, Reply>,
}

/// Takes `first` together with the requests of the same `command`
/// (TXN_PUBLISH or APPEND_STREAM) already queued behind it (at most `room`
/// in all): the broker may read ahead (wire-v2.md, pipelining), and the
/// run's records then share one append and one sync per partition. The
/// first request of another kind (or one that does not decode) is left in
/// the peeked slot of `inbound` for the request loop.
fn read_ahead(
    broker: &Broker,
    session: &mut Session,
    inbound: (&mut mpsc::Receiver<Inbound>, &mut Option<Inbound>),
    command: Command,
    first: Pipelined,
    room: usize,
) -> Vec<Pipelined> {
    let (rx, peeked) = inbound;
    let mut batch = vec![first];
    while batch.len() < room {
        let Ok(item) = rx.try_recv() else {
            break;
        };
        let request = match &item {
            Ok((frame, _)) if frame.command == command => match decode(frame) {
                Decoded::Request(request) => request,
                _ => {
                    *peeked = Some(item);
                    break;
                }
            },
            _ => {
                *peeked = Some(item);
                break;
            }
        };
        let Ok((frame, permit)) = item else {
            break;
        };
        broker.metrics.request(command);
        let admitted = match session.admit(broker, request) {
            Admission::Run(Request::Command { payload, .. }) => Ok(payload),
            Admission::Run(Request::Batch(_)) => Err(Reply::Error(
                ErrorPayload::new("broker_error").with_field("reason", "unexpected batch"),
            )),
            Admission::Answer(reply) => Err(reply),
        };
        batch.push(Pipelined {
            id: frame.request_id,
            started: Instant::now(),
            permit,
            admitted,
        });
    }
    batch
}

/// Runs a pipelined run of `command` requests together
/// ([`commands::txn::txn_publish_pipelined`] or
/// [`commands::eventsource::append_stream_pipelined`], under one request
/// deadline) and queues their replies in order.
async fn run_pipelined(
    broker: &Arc<Broker>,
    listener: Listener,
    command: Command,
    batch: Vec<Pipelined>,
    waiting: &mut futures_util::stream::FuturesOrdered<Waiting>,
) {
    let limit = broker.config.request_timeout;
    let deadline = Deadline::new();
    let mut payloads = Vec::with_capacity(batch.len());
    let mut slots = Vec::with_capacity(batch.len());
    for item in batch {
        let answered = match item.admitted {
            Ok(payload) => {
                payloads.push(payload);
                None
            }
            Err(reply) => Some(reply),
        };
        slots.push((item.id, item.started, item.permit, answered));
    }
    let run = async {
        match command {
            Command::AppendStream => {
                commands::eventsource::append_stream_pipelined(broker, &payloads, listener).await
            }
            _ => commands::txn::txn_publish_pipelined(broker, &payloads, listener).await,
        }
    };
    let replies = match tokio::time::timeout(limit, deadline::scope(deadline.clone(), run)).await {
        Ok(replies) => replies,
        Err(_) => {
            let e = deadline.expire().error();
            payloads.iter().map(|_| Reply::Error(e.clone())).collect()
        }
    };
    let mut replies = replies.into_iter();
    for (id, started, permit, answered) in slots {
        let reply = answered.or_else(|| replies.next()).unwrap_or_else(|| {
            Reply::Error(ErrorPayload::new("broker_error").with_field("reason", "no reply"))
        });
        let answering = (command, id, started);
        waiting.push_back(in_turn(answering, permit, limit, deadline.clone(), reply));
    }
}

/// Writes every waiting reply, in order; false when the connection ends.
async fn flush_waiting(
    broker: &Arc<Broker>,
    writer: &mut FrameWriter,
    rx: &mut mpsc::Receiver<Inbound>,
    waiting: &mut futures_util::stream::FuturesOrdered<Waiting>,
) -> bool {
    while let Some((command, id, started, reply)) = waiting.next().await {
        if !write_reply(broker, writer, rx, (command, id, started), reply).await {
            return false;
        }
    }
    true
}

/// The request a reply answers: its command, its id and when it was
/// taken up.
type Answering = (Command, u64, Instant);

/// Writes one reply, recording it in the metrics; false when the
/// connection ends (a write failed, the reply closes it, or it became a
/// stream).
async fn write_reply(
    broker: &Arc<Broker>,
    writer: &mut FrameWriter,
    rx: &mut mpsc::Receiver<Inbound>,
    answering: Answering,
    reply: Reply,
) -> bool {
    let (command, id, started) = answering;
    let metrics = &broker.metrics;
    let sent = match reply {
        Reply::Ok(payload) => writer.send(&ok_frame(command, id, payload)).await,
        Reply::Error(e) => {
            metrics.error(command, &e.code);
            writer.send(&error_frame(command, id, &e)).await
        }
        Reply::TwoFrames(envelope, batch) => {
            match writer.send(&ok_frame(command, id, envelope)).await {
                Ok(()) => writer.send(&ok_frame(command, id, batch)).await,
                Err(e) => Err(e),
            }
        }
        Reply::Silent => Ok(()),
        Reply::Deferred(durable) => {
            // Only reached for a deferred reply's own outcome, which is
            // never deferred again; answer it rather than lose it. What
            // is held back goes out before the wait.
            if writer.uncork().await.is_err() {
                return false;
            }
            let reply = durable.await;
            return Box::pin(write_reply(broker, writer, rx, answering, reply)).await;
        }
        Reply::Close => {
            debug!(%command, "closing without a reply (injected fault)");
            return false;
        }
        Reply::OkThenClose(payload) => {
            let _ = writer.send(&ok_frame(command, id, payload)).await;
            return false;
        }
        Reply::ErrorThenClose(e) => {
            metrics.error(command, &e.code);
            let _ = writer.send(&error_frame(command, id, &e)).await;
            return false;
        }
        Reply::Stream(plan) => {
            // The connection is dedicated to the stream from now on.
            if writer.uncork().await.is_err() {
                return false;
            }
            stream::run(broker, plan, id, writer, rx).await;
            return false;
        }
    };
    if let Err(e) = sent {
        debug!(error = %e, "write failed; closing");
        return false;
    }
    metrics.replied(command, started);
    true
}

/// Status-OK reply; STREAM replies are always kind 5.
fn ok_frame(command: Command, id: u64, payload: bytes::Bytes) -> Frame {
    match command {
        Command::Stream => Frame::stream(command, id, Status::Ok, payload),
        _ => Frame::response(command, id, Status::Ok, payload),
    }
}

/// Status-ERROR reply carrying a typed error payload.
pub fn error_frame(command: Command, id: u64, error: &ErrorPayload) -> Frame {
    let payload = error.to_bytes().unwrap_or_else(|_| {
        ErrorPayload::new("broker_error")
            .to_bytes()
            .unwrap_or_default()
    });
    match command {
        Command::Stream => Frame::stream(command, id, Status::Error, payload),
        _ => Frame::response(command, id, Status::Error, payload),
    }
}
