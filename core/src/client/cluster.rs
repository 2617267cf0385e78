//! The client's view of the brokers: a pool of connections per address and
//! lane, a topic-metadata cache, and requests routed to partition leaders or
//! group coordinators with the retry policy applied.
//!
//! A *lane* separates traffic that must not wait behind other traffic on one
//! connection: the broker answers a connection's requests strictly in order,
//! so a consumer's 500 ms long poll would delay a heartbeat sent after it.

use super::connection::Connection;
use super::retry::{decide, Backoff, Decision, Idempotence};
use crate::config::ClientConfig;
use crate::error::{Error, Result};
use crate::events::ClientEvents;
use crate::protocol::admin::TopicMetadata;
use crate::protocol::reply::OkReply;
use crate::wire::{Command, CommandPayload};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Refuses a payload the broker would re-render into a different command
/// line (spec §5.5): whitespace in a value other than the trailing
/// `metadata`/`message`/`payload`, or a trailing field out of place.
pub fn check_renders(command: Command, payload: &CommandPayload) -> Result<()> {
    if payload.renders_faithfully() {
        return Ok(());
    }
    let culprit = payload
        .fields()
        .iter()
        .find(|(n, v)| {
            !matches!(n.as_str(), "metadata" | "message" | "payload")
                && v.chars().any(char::is_whitespace)
        })
        .map(|(n, v)| format!("field {n}={v:?} contains whitespace"))
        .unwrap_or_else(|| "metadata/message/payload must be the last fields".to_owned());
    Err(Error::invalid_argument(format!("{command}: {culprit}")))
}

/// The leader address of `partition` in `m`: an invalid-argument error for
/// a partition the topic does not have, `leader_not_found` (availability,
/// retryable) for one without a leader right now.
fn leader_in(m: &TopicMetadata, topic: &str, partition: u32) -> Result<String> {
    match m.leaders.get(partition as usize) {
        None => Err(Error::invalid_argument(format!(
            "topic {topic} has no partition {partition} (it has {})",
            m.leaders.len()
        ))),
        Some(l) if l.is_empty() => Err(crate::wire::ErrorPayload::new("leader_not_found")
            .with_field("topic", topic)
            .with_field("partition", partition)
            .into()),
        Some(l) => Ok(l.clone()),
    }
}

/// A connection lane (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lane(pub u64);

impl Lane {
    /// Admin and group coordination.
    pub const CONTROL: Lane = Lane(0);
    /// Producer batches.
    pub const PRODUCE: Lane = Lane(1);
}

/// Where a request goes: the first reachable bootstrap broker, one broker,
/// or a partition's leader (re-resolved from refreshed metadata after a
/// retryable failure, so a failover is followed).
#[derive(Debug, Clone, Copy)]
enum Route<'a> {
    Any,
    Broker(&'a str),
    Leader(&'a str, u32),
}

/// How many attempts a request may make.
#[derive(Debug, Clone, Copy)]
enum Budget {
    /// `retries` attempts after the first.
    Retries(u32),
    /// Any number of attempts until this instant (a producer batch's
    /// delivery timeout).
    Until(Instant),
}

struct CachedMetadata {
    metadata: Arc<TopicMetadata>,
    fetched: Instant,
}

/// Shared broker access for admin clients, producers and consumers.
pub struct Cluster {
    config: ClientConfig,
    pool: tokio::sync::Mutex<HashMap<(String, Lane), Connection>>,
    metadata: Mutex<HashMap<String, CachedMetadata>>,
    coordinators: Mutex<HashMap<String, String>>,
    next_lane: AtomicU64,
    /// Listeners, dispatcher and statistics counters; shared with the
    /// connections, which report their loss.
    events: Arc<ClientEvents>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("bootstrap", &self.config.bootstrap_servers)
            .finish()
    }
}

impl Cluster {
    /// Validates `config` and creates the (still unconnected) cluster view.
    pub fn new(config: ClientConfig) -> Result<Arc<Cluster>> {
        config.validate()?;
        Ok(Arc::new(Cluster {
            config,
            pool: tokio::sync::Mutex::new(HashMap::new()),
            metadata: Mutex::new(HashMap::new()),
            coordinators: Mutex::new(HashMap::new()),
            next_lane: AtomicU64::new(2),
            events: Arc::new(ClientEvents::default()),
        }))
    }

    /// The connection settings.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The client's listeners and statistics counters.
    pub fn events(&self) -> &ClientEvents {
        &self.events
    }

    /// Reports a background error to the client's error listener (see
    /// [`ClientEvents::report_error`]).
    pub fn report_error(&self, error: Error) {
        self.events.report_error(error);
    }

    /// Opens a pooled connection, which reports its loss to the error
    /// listener.
    async fn open(&self, addr: &str) -> Result<Connection> {
        let events = Arc::downgrade(&self.events);
        let on_lost = Box::new(move |e: Error| {
            if let Some(events) = events.upgrade() {
                events.report_error(e);
            }
        });
        Connection::connect_reporting(addr, &self.config, Some(on_lost)).await
    }

    /// A fresh lane for traffic that needs its own connections.
    pub fn new_lane(&self) -> Lane {
        Lane(self.next_lane.fetch_add(1, Ordering::Relaxed))
    }

    /// A live pooled connection to `addr` on `lane`, opening one if needed.
    pub async fn connection(&self, addr: &str, lane: Lane) -> Result<Connection> {
        let mut pool = self.pool.lock().await;
        let key = (addr.to_owned(), lane);
        if let Some(c) = pool.get(&key) {
            if c.is_alive() {
                return Ok(c.clone());
            }
        }
        let c = self.open(addr).await?;
        pool.insert(key, c.clone());
        Ok(c)
    }

    /// A new connection not kept in the pool (for a dedicated stream). Its
    /// loss is not reported to the error listener: the broker ends a
    /// stream's connection when the stream ends, and its owner handles that
    /// (a broker that went away is reported by the pooled connections).
    pub async fn dedicated_connection(&self, addr: &str) -> Result<Connection> {
        Connection::connect(addr, &self.config).await
    }

    /// Closes every pooled connection of `lane` (all lanes when `None`).
    pub async fn close_lane(&self, lane: Option<Lane>) {
        let mut pool = self.pool.lock().await;
        pool.retain(|(_, l), c| {
            let keep = lane.is_some_and(|lane| lane != *l);
            if !keep {
                c.close();
            }
            keep
        });
    }

    /// Any reachable bootstrap broker's address (the first that connects).
    pub async fn any_broker(&self, lane: Lane) -> Result<(String, Connection)> {
        let mut last = Error::io("no bootstrap servers configured");
        for addr in &self.config.bootstrap_servers {
            match self.connection(addr, lane).await {
                Ok(c) => return Ok((addr.clone(), c)),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Sends `command` to `target` (or any bootstrap broker), following
    /// redirects and backing off on retryable failures as the policy says.
    pub async fn request(
        &self,
        target: Option<&str>,
        lane: Lane,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<Bytes> {
        check_renders(command, payload)?;
        let bytes = payload.to_bytes()?;
        self.request_bytes(target, lane, command, bytes, idempotence, None)
            .await
    }

    /// [`request`](Self::request) with an encoded payload and an optional
    /// per-attempt deadline.
    pub async fn request_bytes(
        &self,
        target: Option<&str>,
        lane: Lane,
        command: Command,
        bytes: Bytes,
        idempotence: Idempotence,
        timeout: Option<Duration>,
    ) -> Result<Bytes> {
        let route = target.map_or(Route::Any, Route::Broker);
        let budget = Budget::Retries(self.config.retries);
        self.exchange_bytes(route, budget, lane, command, bytes, idempotence, timeout)
            .await
    }

    /// [`request`](Self::request) to the leader of `topic`/`partition`,
    /// re-resolved after a retryable failure as in
    /// [`request_leader_bytes`](Self::request_leader_bytes) (event
    /// sourcing, whose commands only a partition's leader serves).
    pub async fn request_leader(
        &self,
        topic: &str,
        partition: u32,
        lane: Lane,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<Bytes> {
        check_renders(command, payload)?;
        let bytes = payload.to_bytes()?;
        self.request_leader_bytes(
            topic,
            partition,
            lane,
            command,
            bytes,
            idempotence,
            None,
            None,
        )
        .await
    }

    /// [`request_leader`](Self::request_leader) for a single-record command
    /// that many tasks send at once (APPEND_STREAM): requests to one
    /// connection that wait for an in-flight slot go out together when one
    /// frees ([`Connection::request_coalesced`]), so the broker takes them
    /// as one run. Retries follow the same policy, one request each.
    pub async fn request_leader_coalesced(
        &self,
        topic: &str,
        partition: u32,
        lane: Lane,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<Bytes> {
        check_renders(command, payload)?;
        let bytes = payload.to_bytes()?;
        let timeout = self.config.request_timeout;
        let budget = Budget::Retries(self.config.retries);
        let route = Route::Leader(topic, partition);
        self.with_retries(route, budget, lane, command, idempotence, |conn| {
            let bytes = bytes.clone();
            async move { conn.request_coalesced(command, bytes, timeout).await }
        })
        .await
    }

    /// Sends partition data (PUBLISH, CONSUME, ...) to the leader of
    /// `topic`/`partition`, with the retry policy applied. Unlike a request
    /// pinned to one broker, a retry after a routing error without an
    /// address (`leader_not_found`), an availability error or a lost
    /// connection refreshes the topic's metadata and goes to the leader it
    /// names, so a failover is followed. `NOT_LEADER leader=host:port` is
    /// followed at once (and the cached metadata dropped). With `deadline`
    /// the attempts are bounded by it instead of by `retries` (a producer
    /// batch is retried until its delivery timeout).
    #[allow(clippy::too_many_arguments)]
    pub async fn request_leader_bytes(
        &self,
        topic: &str,
        partition: u32,
        lane: Lane,
        command: Command,
        bytes: Bytes,
        idempotence: Idempotence,
        timeout: Option<Duration>,
        deadline: Option<Instant>,
    ) -> Result<Bytes> {
        let budget = deadline.map_or(Budget::Retries(self.config.retries), Budget::Until);
        let route = Route::Leader(topic, partition);
        self.exchange_bytes(route, budget, lane, command, bytes, idempotence, timeout)
            .await
    }

    /// One request/reply exchange of `bytes` along `route`.
    #[allow(clippy::too_many_arguments)]
    async fn exchange_bytes(
        &self,
        route: Route<'_>,
        budget: Budget,
        lane: Lane,
        command: Command,
        bytes: Bytes,
        idempotence: Idempotence,
        timeout: Option<Duration>,
    ) -> Result<Bytes> {
        let timeout = timeout.unwrap_or(self.config.request_timeout);
        let stats = self.events.stats();
        self.with_retries(route, budget, lane, command, idempotence, |conn| {
            let bytes = bytes.clone();
            async move {
                let started = Instant::now();
                let reply = conn.request_with_timeout(command, bytes, timeout).await;
                // Fetch latency: long polls that brought records.
                if let (Command::Consume, Ok(batch)) = (command, &reply) {
                    if crate::stats::batch_record_count(batch).is_some_and(|n| n > 0) {
                        stats.fetch_latency(started.elapsed());
                    }
                }
                reply
            }
        })
        .await
    }

    /// Sends a command answered with two frames (READ_STREAM,
    /// BROWSE_MESSAGES, READ_STREAM_HISTORY; wire-v2.md §8.6) with the retry
    /// policy applied; returns the envelope and, unless the envelope is an
    /// error, the batch.
    pub async fn request_pair(
        &self,
        target: Option<&str>,
        lane: Lane,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<(Bytes, Option<Bytes>)> {
        let route = target.map_or(Route::Any, Route::Broker);
        self.pair_along(route, lane, command, payload, idempotence)
            .await
    }

    /// [`request_pair`](Self::request_pair) to the leader of
    /// `topic`/`partition`, re-resolved after a retryable failure as in
    /// [`request_leader_bytes`](Self::request_leader_bytes).
    pub async fn request_pair_leader(
        &self,
        topic: &str,
        partition: u32,
        lane: Lane,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<(Bytes, Option<Bytes>)> {
        let route = Route::Leader(topic, partition);
        self.pair_along(route, lane, command, payload, idempotence)
            .await
    }

    /// A two-frame exchange along `route` with the retry policy applied.
    async fn pair_along(
        &self,
        route: Route<'_>,
        lane: Lane,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<(Bytes, Option<Bytes>)> {
        check_renders(command, payload)?;
        let bytes = payload.to_bytes()?;
        let timeout = self.config.request_timeout;
        let budget = Budget::Retries(self.config.retries);
        self.with_retries(route, budget, lane, command, idempotence, |conn| {
            let bytes = bytes.clone();
            async move { conn.request_pair(command, bytes, timeout).await }
        })
        .await
    }

    /// Runs `exchange` on a connection along `route`, following redirects
    /// and backing off as [`decide`] says, within `budget`.
    async fn with_retries<T, F, Fut>(
        &self,
        route: Route<'_>,
        budget: Budget,
        lane: Lane,
        command: Command,
        idempotence: Idempotence,
        exchange: F,
    ) -> Result<T>
    where
        F: Fn(Connection) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let mut backoff = Backoff::new(self.config.retry_backoff, self.config.retry_backoff_max);
        // `None`: resolve along the route (bootstrap, or the leader from
        // the metadata, refreshed when `refresh` is set).
        let mut addr = match route {
            Route::Broker(b) => Some(b.to_owned()),
            Route::Any | Route::Leader(..) => None,
        };
        let mut refresh = false;
        let mut attempt = 0u32;
        loop {
            let conn_result = match (&addr, route) {
                (Some(a), _) => self.connection(a, lane).await,
                (None, Route::Leader(topic, partition)) => {
                    match self.resolve_leader(topic, partition, refresh).await {
                        Ok(a) => self.connection(&a, lane).await,
                        Err(e) => Err(e),
                    }
                }
                (None, _) => self.any_broker(lane).await.map(|(_, c)| c),
            };
            // `sent`: the request may have reached the broker.
            let (error, sent) = match conn_result {
                Ok(conn) => {
                    let in_flight = self.events.stats().request_started(attempt > 0);
                    let outcome = exchange(conn).await;
                    drop(in_flight);
                    match outcome {
                        Ok(reply) => return Ok(reply),
                        Err(e) => (e, true),
                    }
                }
                Err(e) => (e, false),
            };
            self.events.stats().error(error.class());
            let exhausted = match budget {
                Budget::Retries(retries) => attempt >= retries,
                Budget::Until(deadline) => Instant::now() >= deadline,
            };
            if exhausted {
                return Err(error);
            }
            attempt += 1;
            match decide(&error, sent, idempotence) {
                Decision::Fail => return Err(error),
                Decision::Redirect(to) => {
                    tracing::debug!(%command, %to, "following redirect");
                    if let Route::Leader(topic, _) = route {
                        // The cached leader is stale: the next request
                        // for the topic asks again.
                        self.invalidate_metadata(topic);
                    }
                    addr = Some(to);
                }
                Decision::Backoff => {
                    let mut delay = backoff.next_delay();
                    if let Budget::Until(deadline) = budget {
                        delay = delay.min(deadline.saturating_duration_since(Instant::now()));
                    }
                    tracing::debug!(%command, %error, ?delay, "retrying");
                    tokio::time::sleep(delay).await;
                    // Routing may have changed: go through bootstrap (or
                    // fresh metadata) again unless the caller pinned a
                    // broker.
                    match route {
                        Route::Broker(_) => {}
                        Route::Any => addr = None,
                        Route::Leader(topic, _) => {
                            self.invalidate_metadata(topic);
                            addr = None;
                            refresh = true;
                        }
                    }
                }
            }
        }
    }

    /// The leader address of `topic`/`partition`, from fresh metadata when
    /// `refresh` is set.
    async fn resolve_leader(&self, topic: &str, partition: u32, refresh: bool) -> Result<String> {
        // Boxed: METADATA goes through `with_retries` too (which calls
        // this for partition data), and a recursive future needs a box.
        let m = Box::pin(self.metadata(topic, refresh)).await?;
        leader_in(&m, topic, partition)
    }

    /// Sends a text-reply command to any broker and parses its `OK` reply.
    pub async fn ok_request(
        &self,
        command: Command,
        payload: &CommandPayload,
        idempotence: Idempotence,
    ) -> Result<OkReply> {
        let reply = self
            .request(None, Lane::CONTROL, command, payload, idempotence)
            .await?;
        OkReply::parse(&reply)
    }

    /// Topic metadata from the cache, if it is there and younger than
    /// `metadata_max_age` (never waits).
    pub fn cached_metadata(&self, topic: &str) -> Option<Arc<TopicMetadata>> {
        let cache = self.metadata.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(topic)
            .filter(|c| c.fetched.elapsed() < self.config.metadata_max_age)
            .map(|c| Arc::clone(&c.metadata))
    }

    /// Topic metadata, from the cache unless it is older than
    /// `metadata_max_age` or `refresh` is set.
    pub async fn metadata(&self, topic: &str, refresh: bool) -> Result<Arc<TopicMetadata>> {
        if !refresh {
            if let Some(m) = self.cached_metadata(topic) {
                return Ok(m);
            }
        }
        let payload = CommandPayload::new().field("topic", topic);
        let reply = self
            .ok_request(Command::Metadata, &payload, Idempotence::Safe)
            .await?;
        let metadata = Arc::new(TopicMetadata::from_reply(&reply)?);
        self.metadata
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                topic.to_owned(),
                CachedMetadata {
                    metadata: Arc::clone(&metadata),
                    fetched: Instant::now(),
                },
            );
        Ok(metadata)
    }

    /// Forgets cached metadata for `topic` (after a routing error).
    pub fn invalidate_metadata(&self, topic: &str) {
        self.metadata
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(topic);
    }

    /// The leader address of a partition (`leader_not_found`, retryable,
    /// while it has none).
    pub async fn leader(&self, topic: &str, partition: u32) -> Result<String> {
        self.resolve_leader(topic, partition, false).await
    }

    /// The coordinator address of a group (FIND_COORDINATOR, cached).
    pub async fn coordinator(&self, group: &str, refresh: bool) -> Result<String> {
        self.find_coordinator("group", group, refresh).await
    }

    /// The coordinator address of a transactional id (FIND_COORDINATOR
    /// transactional_id=, cached).
    pub async fn txn_coordinator(&self, transactional_id: &str, refresh: bool) -> Result<String> {
        self.find_coordinator("transactional_id", transactional_id, refresh)
            .await
    }

    /// FIND_COORDINATOR `field=key`, cached per field and key.
    async fn find_coordinator(&self, field: &str, key: &str, refresh: bool) -> Result<String> {
        let cache_key = format!("{field}\0{key}");
        if !refresh {
            if let Some(a) = self
                .coordinators
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&cache_key)
            {
                return Ok(a.clone());
            }
        }
        let payload = CommandPayload::new().field(field, key);
        let reply = self
            .ok_request(Command::FindCoordinator, &payload, Idempotence::Safe)
            .await?;
        let addr = format!("{}:{}", reply.require("host")?, reply.require("port")?);
        self.coordinators
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cache_key, addr.clone());
        Ok(addr)
    }

    /// Closes every connection.
    pub async fn close(&self) {
        self.close_lane(None).await;
    }
}
