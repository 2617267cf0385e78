//! The transactions of a producer configured with `transactional_id`
//! (`docs/transactions.md`).
//!
//! The broker grants a session (`producerId`, `epoch`) per INIT_PRODUCER_ID
//! and allows one transaction per epoch, so every transaction after the
//! first starts by re-initialising. Records of a transaction go through
//! the normal accumulator and sender; the sender publishes them with
//! TXN_PUBLISH and the session's sequences, which restart at 1 in every
//! epoch. Control calls (init, begin, offsets, commit, abort) are
//! serialised by one async mutex.

use crate::client::{Cluster, Idempotence, Lane};
use crate::error::{Error, ErrorKind, Result};
use crate::protocol::reply::OkReply;
use crate::protocol::txn::{self, GroupMetadata, Session, TxnResult};
use crate::wire::{Command, CommandPayload, ErrorClass};
use crate::TopicPartition;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// Where the producer is in its transaction lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// `init_transactions` was not called yet.
    Uninitialized,
    /// A fresh epoch: a transaction may begin.
    Ready,
    /// A transaction is open: sends and offsets belong to it.
    Open,
    /// The epoch's transaction completed: the next begin re-initialises.
    Completed,
}

/// The transaction state of one producer.
pub(super) struct Transactions {
    id: String,
    /// The lifecycle; held across a whole control call.
    phase: tokio::sync::Mutex<Phase>,
    /// The current session, read by the sender for every record.
    session: Mutex<Option<Session>>,
    /// Sends are accepted (a transaction is open).
    open: AtomicBool,
    /// The first failed send of the open transaction: it can only abort.
    send_failure: Mutex<Option<Error>>,
    /// Fenced by a newer session: nothing more is possible.
    fatal: Mutex<Option<Error>>,
    /// Next TXN_APPEND_STREAM sequence per topic in this epoch (their own
    /// space, apart from TXN_PUBLISH's per-partition sequences).
    stream_seqs: Mutex<std::collections::HashMap<String, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The error for a call made in the wrong phase.
fn wrong_state(message: impl Into<String>) -> Error {
    Error::invalid_argument(message).with_code("invalid_transaction_state")
}

/// Errors that end the producer's session for good.
pub(super) fn is_fencing(e: &Error) -> bool {
    e.kind() == ErrorKind::Broker
        && (e.class() == ErrorClass::Fencing
            && (e.is_broker_code("producer_fenced") || e.is_broker_code("stale_producer_epoch")))
}

/// True when END_TXN may be repeated: its outcome is unknown (the reply
/// was lost) or the broker asked to come back later.
fn outcome_unknown(e: &Error) -> bool {
    match e.kind() {
        ErrorKind::Io | ErrorKind::Timeout => true,
        ErrorKind::Broker => matches!(e.class(), ErrorClass::Availability | ErrorClass::Routing),
        _ => false,
    }
}

impl Transactions {
    /// State for `transactional_id`, not yet initialised.
    pub fn new(id: String) -> Transactions {
        Transactions {
            id,
            phase: tokio::sync::Mutex::new(Phase::Uninitialized),
            session: Mutex::new(None),
            open: AtomicBool::new(false),
            send_failure: Mutex::new(None),
            fatal: Mutex::new(None),
            stream_seqs: Mutex::new(Default::default()),
        }
    }

    /// The transactional id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session records are published with.
    pub fn session(&self) -> Option<Session> {
        lock(&self.session).clone()
    }

    /// Refuses a send outside an open transaction or after fencing.
    pub fn check_send(&self) -> Result<()> {
        self.check_fatal()?;
        if self.open.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err(wrong_state(
                "a transactional producer sends only inside a transaction: call begin_transaction first",
            ))
        }
    }

    fn check_fatal(&self) -> Result<()> {
        match lock(&self.fatal).as_ref() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Remembers a failed send: the transaction can then only abort;
    /// fencing makes the producer unusable.
    pub fn send_failed(&self, e: &Error) {
        if is_fencing(e) {
            lock(&self.fatal).get_or_insert_with(|| e.clone());
        }
        lock(&self.send_failure).get_or_insert_with(|| e.clone());
    }

    /// Records fencing seen by a control call, then returns the error.
    fn fail(&self, e: Error) -> Error {
        if is_fencing(&e) {
            lock(&self.fatal).get_or_insert_with(|| e.clone());
        }
        e
    }

    /// Sends a coordinator command (routed by FIND_COORDINATOR
    /// transactional_id=) and parses its OK reply.
    async fn request(
        &self,
        cluster: &Cluster,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<OkReply> {
        let coordinator = cluster.txn_coordinator(&self.id, false).await?;
        let reply = cluster
            .request(
                Some(&coordinator),
                Lane::CONTROL,
                command,
                payload,
                idempotence,
            )
            .await;
        if let Err(e) = &reply {
            if e.kind() == ErrorKind::Broker && e.class() == ErrorClass::Routing {
                cluster.txn_coordinator(&self.id, true).await?;
            }
        }
        OkReply::parse(&reply?)
    }

    /// INIT_PRODUCER_ID: a new epoch. `restart` resets the sequences.
    async fn init(&self, cluster: &Cluster, restart: impl FnOnce(i64)) -> Result<()> {
        let reply = self
            .request(
                cluster,
                Command::InitProducerId,
                &txn::init_producer_id(&self.id),
                // Each attempt may bump the epoch, which is harmless: only
                // the last session is used.
                Idempotence::Safe,
            )
            .await
            .map_err(|e| self.fail(e))?;
        let session = Session::from_reply(&reply)?;
        restart(session.epoch);
        lock(&self.stream_seqs).clear();
        *lock(&self.session) = Some(session);
        Ok(())
    }

    /// `init_transactions`: obtains the session (fencing older ones).
    pub async fn init_transactions(
        &self,
        cluster: &Cluster,
        restart: impl FnOnce(i64),
    ) -> Result<()> {
        self.check_fatal()?;
        let mut phase = self.phase.lock().await;
        if *phase == Phase::Open {
            return Err(wrong_state(
                "init_transactions while a transaction is open: commit or abort it first",
            ));
        }
        self.init(cluster, restart).await?;
        *phase = Phase::Ready;
        Ok(())
    }

    /// `begin_transaction`: re-initialises when the epoch is used, then
    /// BEGIN_TXN.
    pub async fn begin(&self, cluster: &Cluster, restart: impl FnOnce(i64)) -> Result<()> {
        self.check_fatal()?;
        let mut phase = self.phase.lock().await;
        match *phase {
            Phase::Uninitialized => {
                return Err(wrong_state(
                    "call init_transactions before begin_transaction",
                ))
            }
            Phase::Open => return Err(wrong_state("a transaction is already open")),
            Phase::Completed => self.init(cluster, restart).await?,
            Phase::Ready => {}
        }
        let session = self
            .session()
            .ok_or_else(|| wrong_state("no producer session"))?;
        let result = self
            .request(
                cluster,
                Command::BeginTxn,
                &txn::begin(&self.id, &session),
                Idempotence::Safe,
            )
            .await;
        match result {
            Ok(_) => {}
            // A retried BEGIN_TXN whose first attempt succeeded.
            Err(e) if e.is_broker_code("transaction_already_open") => {}
            Err(e) if e.is_broker_code("producer_reinitialization_required") => {
                *phase = Phase::Completed;
                return Err(e);
            }
            Err(e) => return Err(self.fail(e)),
        }
        *lock(&self.send_failure) = None;
        *phase = Phase::Open;
        self.open.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// SEND_OFFSETS_TO_TXN, one request per topic.
    pub async fn send_offsets(
        &self,
        cluster: &Cluster,
        offsets: &[(TopicPartition, u64)],
        group: &GroupMetadata,
    ) -> Result<()> {
        self.check_fatal()?;
        let phase = self.phase.lock().await;
        if *phase != Phase::Open {
            return Err(wrong_state(
                "send_offsets_to_transaction needs an open transaction",
            ));
        }
        let session = self
            .session()
            .ok_or_else(|| wrong_state("no producer session"))?;
        let mut by_topic: BTreeMap<&str, Vec<(u32, u64)>> = BTreeMap::new();
        for (tp, offset) in offsets {
            by_topic
                .entry(tp.topic.as_str())
                .or_default()
                .push((tp.partition, *offset));
        }
        for (topic, mut list) in by_topic {
            list.sort_unstable();
            list.dedup_by_key(|(p, _)| *p);
            let payload = txn::send_offsets(&self.id, &session, topic, group, &list);
            // Staging the same offsets twice is harmless (they may only
            // stay or advance), so a lost reply may be retried.
            self.request(
                cluster,
                Command::SendOffsetsToTxn,
                &payload,
                Idempotence::Safe,
            )
            .await
            .map_err(|e| self.fail(e))?;
        }
        Ok(())
    }

    /// TXN_APPEND_STREAM: appends `event` to aggregate `key` inside the open
    /// transaction (the event gets `expected_version + 1` at the commit).
    /// A lost reply is retried with the same sequence, which the broker
    /// answers without appending again.
    pub async fn append_stream(
        &self,
        cluster: &Cluster,
        topic: &str,
        key: &str,
        expected_version: u64,
        event: &crate::eventstore::Event,
    ) -> Result<crate::eventstore::Appended> {
        self.check_send()?;
        event.check()?;
        let session = self
            .session()
            .ok_or_else(|| wrong_state("no producer session"))?;
        let seq = {
            let mut seqs = lock(&self.stream_seqs);
            let next = seqs.entry(topic.to_owned()).or_insert(0);
            *next += 1;
            *next
        };
        let p = crate::eventstore::event_fields(
            CommandPayload::new()
                .field("transactional_id", &self.id)
                .field("topic", topic)
                .field("key", key)
                .field("expected_version", expected_version + 1)
                .field("producerId", &session.producer_id)
                .field("seqNum", seq)
                .field("epoch", session.epoch),
            event,
        );
        let reply = self
            .request(cluster, Command::TxnAppendStream, &p, Idempotence::Safe)
            .await
            .map_err(|e| {
                let e = self.fail(e);
                lock(&self.send_failure).get_or_insert_with(|| e.clone());
                e
            })?;
        Ok(crate::eventstore::Appended {
            version: reply.parse_field("version")?,
            offset: reply.parse_field("offset")?,
            partition: reply.parse_field("partition")?,
        })
    }

    /// END_TXN with `result`, repeated with the same epoch while its outcome
    /// is unknown, until `deadline`. `flush` waits for the transaction's
    /// sends first.
    pub async fn end(
        &self,
        cluster: &Cluster,
        result: TxnResult,
        flush: impl std::future::Future<Output = Result<()>>,
        deadline: Duration,
        backoff: Duration,
    ) -> Result<()> {
        self.check_fatal()?;
        let mut phase = self.phase.lock().await;
        if *phase != Phase::Open {
            return Err(wrong_state(format!(
                "{} needs an open transaction",
                match result {
                    TxnResult::Commit => "commit_transaction",
                    TxnResult::Abort => "abort_transaction",
                }
            )));
        }
        let flushed = flush.await;
        if result == TxnResult::Commit {
            flushed?;
            if let Some(e) = lock(&self.send_failure).clone() {
                return Err(wrong_state(format!(
                    "a send of this transaction failed ({e}); abort the transaction"
                ))
                .with_field("cause", e.code()));
            }
        }
        // No send may join the transaction from now on.
        self.open.store(false, Ordering::SeqCst);
        let session = self
            .session()
            .ok_or_else(|| wrong_state("no producer session"))?;
        let payload = txn::end(&self.id, &session, result);
        let give_up = Instant::now() + deadline;
        let mut delay = backoff;
        let outcome = loop {
            let attempt = self
                .request(cluster, Command::EndTxn, &payload, Idempotence::Safe)
                .await;
            match attempt {
                Err(e) if outcome_unknown(&e) && Instant::now() + delay < give_up => {
                    tracing::debug!(error = %e, "END_TXN outcome unknown; retrying with the same epoch");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
                other => break other,
            }
        };
        match outcome {
            Ok(_) => {
                *phase = Phase::Completed;
                Ok(())
            }
            Err(e) if outcome_unknown(&e) => {
                // Still undecided: the transaction stays open so that the
                // caller may call commit (or abort) again with this epoch.
                Err(e)
            }
            Err(e) => {
                // Decided otherwise (aborted by timeout, group fence) or
                // fenced: this epoch is done either way.
                *phase = Phase::Completed;
                Err(self.fail(e))
            }
        }
    }
}
