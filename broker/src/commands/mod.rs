//! Command handlers, one module per family, and the dispatcher that routes a
//! decoded request to them.
//!
//! Handlers return a [`Reply`]; failures are typed [`ErrorPayload`]s whose
//! class and retryability come from the registry. The connection layer turns
//! replies into frames.

pub mod admin;
pub mod aggregate;
pub mod cluster;
pub mod consume;
pub mod deadline;
pub mod eventsource;
pub mod groups;
pub mod params;
pub mod publish;
pub mod stream;
pub mod txn;

use std::sync::Arc;

use bytes::Bytes;
use cursus_wire::{Batch, Command, CommandPayload, ErrorPayload};

use crate::broker::{Broker, Listener};
use crate::faults::FaultAction;

/// A decoded application request.
#[derive(Debug, Clone)]
pub enum Request {
    /// A CRQ2 command, already rendered to a line and parsed back (§5.5).
    Command {
        /// The command parsed from the rendered line.
        command: Command,
        /// Its arguments.
        payload: CommandPayload,
    },
    /// A decoded CBV2 batch (PUBLISH only).
    Batch(Batch),
}

/// What the connection sends back.
#[derive(Debug)]
pub enum Reply {
    /// Status OK with this payload.
    Ok(Bytes),
    /// Status ERROR with this typed error.
    Error(ErrorPayload),
    /// No frame at all (PUBLISH acks=0).
    Silent,
    /// Two status-OK RESPONSE frames with the request's id (READ_STREAM,
    /// BROWSE_MESSAGES, READ_STREAM_HISTORY): the JSON envelope, then the
    /// CBV2 batch (wire-v2.md §8.6).
    TwoFrames(Bytes, Bytes),
    /// Status OK, then close the connection (EXIT).
    OkThenClose(Bytes),
    /// Status ERROR, then close the connection (unrecognised command line).
    ErrorThenClose(ErrorPayload),
    /// The connection becomes a stream.
    Stream(stream::StreamPlan),
    /// No reply: close the connection (an injected `drop-after` fault).
    Close,
    /// The request took effect; its reply is ready once it is durable.
    /// The connection goes on with the next request meanwhile and writes
    /// replies in arrival order (see `server::connection`).
    Deferred(Durable),
}

/// The rest of a [`Reply::Deferred`]: resolves to the reply once the
/// request is durable.
pub struct Durable(pub std::pin::Pin<Box<dyn std::future::Future<Output = Reply> + Send>>);

impl std::fmt::Debug for Durable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Durable(..)")
    }
}

impl std::future::Future for Durable {
    type Output = Reply;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Reply> {
        self.0.as_mut().poll(cx)
    }
}

impl Reply {
    /// An `OK …` text reply.
    pub fn text(line: impl Into<String>) -> Reply {
        Reply::Ok(Bytes::from(line.into()))
    }
}

impl From<ErrorPayload> for Reply {
    fn from(e: ErrorPayload) -> Reply {
        Reply::Error(e)
    }
}

/// Handler result: `Err` becomes a status-ERROR frame.
pub type HandlerResult = Result<Reply, ErrorPayload>;

/// Commands this broker implements, as HELP lists them.
pub const SUPPORTED: [Command; 41] = [
    Command::Auth,
    Command::Create,
    Command::AlterTopicConfig,
    Command::Delete,
    Command::Truncate,
    Command::List,
    Command::Help,
    Command::Describe,
    Command::Metadata,
    Command::ListOffsets,
    Command::Publish,
    Command::Consume,
    Command::Stream,
    Command::FindCoordinator,
    Command::RegisterGroup,
    Command::JoinGroup,
    Command::SyncGroup,
    Command::Heartbeat,
    Command::LeaveGroup,
    Command::GroupStatus,
    Command::ListGroups,
    Command::CommitOffset,
    Command::BatchCommit,
    Command::FetchOffset,
    Command::InitProducerId,
    Command::BeginTxn,
    Command::TxnPublish,
    Command::TxnAppendStream,
    Command::SendOffsetsToTxn,
    Command::EndTxn,
    Command::TxnStatus,
    Command::AppendStream,
    Command::ReadStream,
    Command::StreamVersion,
    Command::SaveSnapshot,
    Command::ReadSnapshot,
    Command::BrowseMessages,
    Command::ReadStreamHistory,
    Command::AggregateReplayProof,
    Command::AggregateEventRangeRead,
    Command::Exit,
];

impl Request {
    /// The command this request is.
    pub fn command(&self) -> Command {
        match self {
            Request::Command { command, .. } => *command,
            Request::Batch(_) => Command::Publish,
        }
    }
}

/// Routes one request from a client of `listener` to its handler,
/// applying an injected fault if one is configured for its command (see
/// [`crate::faults`]).
pub async fn dispatch(broker: &Arc<Broker>, request: Request, listener: Listener) -> Reply {
    let Some(fault) = broker.faults.take(request.command()) else {
        return execute(broker, request, listener).await;
    };
    tracing::info!(command = %request.command(), action = ?fault.action, "injecting a fault");
    let error = || {
        Reply::Error(
            fault
                .error
                .clone()
                .unwrap_or_else(|| ErrorPayload::new("broker_error")),
        )
    };
    match fault.action {
        FaultAction::Error => error(),
        FaultAction::ErrorAfter => {
            execute(broker, request, listener).await;
            error()
        }
        FaultAction::DropAfter => {
            execute(broker, request, listener).await;
            Reply::Close
        }
        FaultAction::Delay(ms) => {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            execute(broker, request, listener).await
        }
        FaultAction::DelayAfter(ms) => {
            let reply = execute(broker, request, listener).await;
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            reply
        }
    }
}

/// Commands that never change state: a timeout of one is always
/// `outcome=not_accepted`.
pub fn is_read_only(command: Command) -> bool {
    use Command::*;
    matches!(
        command,
        List | Help
            | Describe
            | Metadata
            | ListOffsets
            | FindCoordinator
            | Consume
            | Stream
            | GroupStatus
            | ListGroups
            | FetchOffset
            | TxnStatus
            | ReadStream
            | StreamVersion
            | ReadSnapshot
            | BrowseMessages
            | ReadStreamHistory
            | AggregateReplayProof
            | AggregateEventRangeRead
            | Exit
    )
}

/// Mutating commands whose handler takes its point of no return itself,
/// right before it appends ([`deadline::point_of_no_return`]).
fn has_own_point_of_no_return(command: Command) -> bool {
    matches!(command, Command::Publish | Command::AppendStream)
}

/// Runs one request's handler.
async fn execute(broker: &Arc<Broker>, request: Request, listener: Listener) -> Reply {
    let command = request.command();
    // Any other mutating command passes its point of no return as it starts.
    if !is_read_only(command) && !has_own_point_of_no_return(command) {
        if let Err(e) = deadline::point_of_no_return() {
            return Reply::Error(e);
        }
    }
    let (command, p) = match request {
        Request::Batch(batch) => return publish::publish_batch(broker, batch, listener).await,
        Request::Command { command, payload } => (command, payload),
    };
    let result = match command {
        Command::Create => admin::create(broker, &p).await,
        Command::AlterTopicConfig => admin::alter_topic_config(broker, &p).await,
        Command::Delete => admin::delete(broker, &p).await,
        Command::Truncate => admin::truncate(broker, &p).await,
        Command::List => admin::list(broker),
        Command::Help => admin::help(),
        Command::Describe => admin::describe(broker, &p, listener),
        Command::Metadata => admin::metadata(broker, &p, listener),
        Command::ListOffsets => admin::list_offsets(broker, &p).await,
        Command::FindCoordinator => admin::find_coordinator(broker, &p, listener),
        Command::Publish => return publish::publish_text(broker, &p, listener).await,
        Command::Consume => consume::consume(broker, &p, listener).await,
        Command::Stream => stream::start(broker, &p, listener).await,
        Command::RegisterGroup => groups::register_group(broker, &p, listener).await,
        Command::JoinGroup => groups::join_group(broker, &p, listener).await,
        Command::SyncGroup => groups::sync_group(broker, &p, listener).await,
        Command::Heartbeat => groups::heartbeat(broker, &p, listener).await,
        Command::LeaveGroup => groups::leave_group(broker, &p, listener).await,
        Command::GroupStatus => groups::group_status(broker, &p, listener).await,
        Command::ListGroups => groups::list_groups(broker).await,
        Command::CommitOffset => groups::commit_offset(broker, &p, listener).await,
        Command::BatchCommit => groups::batch_commit(broker, &p, listener).await,
        Command::FetchOffset => groups::fetch_offset(broker, &p, listener).await,
        Command::InitProducerId => txn::init_producer_id(broker, &p, listener).await,
        Command::BeginTxn => txn::begin_txn(broker, &p, listener).await,
        Command::TxnPublish => txn::txn_publish(broker, &p, listener).await,
        Command::TxnAppendStream => txn::txn_append_stream(broker, &p, listener).await,
        Command::SendOffsetsToTxn => txn::send_offsets_to_txn(broker, &p, listener).await,
        Command::EndTxn => txn::end_txn(broker, &p, listener).await,
        Command::TxnStatus => txn::txn_status(broker, &p, listener).await,
        Command::AppendStream => eventsource::append_stream(broker, &p, listener).await,
        Command::ReadStream => eventsource::read_stream(broker, &p, listener).await,
        Command::StreamVersion => eventsource::stream_version(broker, &p, listener),
        Command::SaveSnapshot => eventsource::save_snapshot(broker, &p, listener).await,
        Command::ReadSnapshot => eventsource::read_snapshot(broker, &p, listener),
        Command::BrowseMessages => eventsource::browse_messages(broker, &p, listener).await,
        Command::ReadStreamHistory => eventsource::read_stream_history(broker, &p, listener).await,
        Command::AggregateReplayProof => aggregate::replay_proof(broker, &p, listener).await,
        Command::AggregateEventRangeRead => aggregate::event_range_read(broker, &p, listener).await,
        Command::ClusterStatus => cluster::cluster_status(broker, listener),
        Command::ListCluster => cluster::list_cluster(broker, &p, listener),
        Command::ElectLeader => cluster::elect_leader(broker, &p).await,
        Command::ReassignPartitions => cluster::reassign_partitions(broker, &p).await,
        Command::Exit => Ok(Reply::OkThenClose(Bytes::from_static(b"OK"))),
        // AUTH never gets here: the connection's session answers it
        // (`crate::auth::Session`).
        other => Err(unsupported(other)),
    };
    into_reply(result)
}

fn into_reply(result: HandlerResult) -> Reply {
    result.unwrap_or_else(Reply::Error)
}

/// The typed error for a command this standalone broker does not serve.
fn unsupported(command: Command) -> ErrorPayload {
    use Command::*;
    let code = match command {
        // Cluster administration needs distributed mode.
        JoinCluster | LeaveCluster | HeartbeatCluster | ReplicaCatchup => {
            "distribution_not_enabled"
        }
        // Broker-to-broker commands are never accepted from clients here.
        _ => "internal_command_unauthorized",
    };
    ErrorPayload::new(code).with_field("command", command.name())
}
