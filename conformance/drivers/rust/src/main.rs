//! Conformance driver for the Rust API (`cursus` crate, async).
//!
//! `cursus-conformance-rust <bootstrap> <plan>`: runs each plan step through
//! the public async API and prints one JSON line per step. The contract is
//! `conformance/PROTOCOL.md`; the harness compares the results.

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::consumer::{Consumer, RebalanceEvent, Subscription};
use cursus::eventstore::{
    Aggregate, Cursor, Event, EventStore, Page, PageLimits, Snapshot, StoredEvent,
};
use cursus::producer::{Producer, ProducerRecord};
use cursus::TopicPartition;
use cursus::{ClientConfig, ConsumerConfig, Error, ProducerConfig};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Arguments named `config.<option>` are configuration (PROTOCOL.md, "Plan file").
const CONFIG_PREFIX: &str = "config.";

/// One plan line: the op, its own arguments and the configuration pairs.
struct Step {
    op: String,
    args: HashMap<String, String>,
    config: Vec<(String, String)>,
}

/// Why a step failed: the binding's error, or a fault of the plan/driver.
enum Failure {
    Cursus(Error),
    Driver(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Cursus(e)
    }
}

type StepResult = Result<Value, Failure>;

fn parse_step(line: &str) -> Result<Step, String> {
    let mut words = line.split_whitespace();
    let op = words.next().ok_or("empty step")?.to_string();
    let mut step = Step {
        op,
        args: HashMap::new(),
        config: Vec::new(),
    };
    for word in words {
        let (k, v) = word
            .split_once('=')
            .ok_or_else(|| format!("argument without '=': {word}"))?;
        match k.strip_prefix(CONFIG_PREFIX) {
            Some(option) => step.config.push((option.to_string(), v.to_string())),
            None => {
                step.args.insert(k.to_string(), v.to_string());
            }
        }
    }
    Ok(step)
}

impl Step {
    fn arg(&self, name: &str) -> Result<&str, Failure> {
        self.args
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| Failure::Driver(format!("{}: missing argument {name}", self.op)))
    }

    fn num<T: std::str::FromStr>(&self, name: &str) -> Result<T, Failure> {
        self.arg(name)?
            .parse()
            .map_err(|_| Failure::Driver(format!("{}: {name} is not a number", self.op)))
    }

    fn bytes(&self, name: &str) -> Result<Option<Vec<u8>>, Failure> {
        match self.args.get(name) {
            None => Ok(None),
            Some(h) => hex::decode(h)
                .map(Some)
                .map_err(|_| Failure::Driver(format!("{}: {name} is not hex", self.op))),
        }
    }
}

/// The handles a plan opened, by name.
struct Driver {
    bootstrap: String,
    admins: HashMap<String, Admin>,
    producers: HashMap<String, Producer>,
    consumers: HashMap<String, Arc<Consumer>>,
    /// What each consumer's rebalance listener was told (`rebalance_listen`).
    rebalance_events: HashMap<String, Arc<Mutex<Vec<Value>>>>,
    stores: HashMap<String, EventStore>,
}

fn missing(kind: &str, name: &str) -> Failure {
    Failure::Driver(format!("no {kind} named {name}"))
}

impl Driver {
    async fn admin(&mut self, step: &Step) -> Result<&Admin, Failure> {
        let name = step.args.get("admin").cloned().unwrap_or_default();
        if name.is_empty() && !self.admins.contains_key("") {
            let admin = Admin::connect(ClientConfig::new(self.bootstrap.clone())).await?;
            self.admins.insert(String::new(), admin);
        }
        self.admins
            .get(&name)
            .ok_or_else(|| missing("admin", &name))
    }

    fn producer(&self, step: &Step) -> Result<&Producer, Failure> {
        let name = step.arg("producer")?;
        self.producers
            .get(name)
            .ok_or_else(|| missing("producer", name))
    }

    fn store(&self, step: &Step) -> Result<&EventStore, Failure> {
        let name = step.arg("store")?;
        self.stores.get(name).ok_or_else(|| missing("store", name))
    }

    /// A byte-string argument that must hold UTF-8 text (event-store ops).
    fn text(&self, step: &Step, name: &str) -> Result<Option<String>, Failure> {
        step.bytes(name)?
            .map(|b| {
                String::from_utf8(b)
                    .map_err(|_| Failure::Driver(format!("{}: {name} is not UTF-8", step.op)))
            })
            .transpose()
    }

    /// Reads every page of `cursor`: the first snapshot, the events, the last
    /// page and the number of pages.
    async fn all_pages(
        &self,
        step: &Step,
        mut cursor: Cursor,
    ) -> Result<(Option<Snapshot>, Vec<Value>, Option<Page>, usize), Failure> {
        let store = self.store(step)?;
        let (mut snapshot, mut events, mut last, mut pages) = (None, Vec::new(), None, 0);
        while let Some(page) = store.next_page(&mut cursor).await? {
            pages += 1;
            if snapshot.is_none() {
                snapshot = page.snapshot.clone();
            }
            events.extend(page.events.iter().map(event_json));
            last = Some(page);
        }
        Ok((snapshot, events, last, pages))
    }

    fn consumer(&self, step: &Step) -> Result<&Arc<Consumer>, Failure> {
        let name = step.arg("consumer")?;
        self.consumers
            .get(name)
            .ok_or_else(|| missing("consumer", name))
    }

    async fn run(&mut self, step: &Step) -> StepResult {
        let bootstrap = self.bootstrap.clone();
        match step.op.as_str() {
            "admin_open" => {
                let mut config = ClientConfig::new(bootstrap);
                for (k, v) in &step.config {
                    config.set(k, v)?;
                }
                let admin = Admin::connect(config).await?;
                self.admins.insert(step.arg("name")?.to_string(), admin);
                Ok(json!({}))
            }
            "admin_close" => {
                let name = step.arg("name")?;
                self.admins
                    .get(name)
                    .ok_or_else(|| missing("admin", name))?
                    .close()
                    .await;
                Ok(json!({}))
            }
            "create_topic" => {
                let mut topic = NewTopic::new(step.arg("topic")?);
                topic.partitions = Some(step.num("partitions")?);
                topic.auth_policy = step.args.get("auth_policy").cloned();
                let acl = |name: &str| {
                    step.args
                        .get(name)
                        .map(|v| v.split(',').map(str::to_owned).collect::<Vec<_>>())
                };
                topic.read_acl = acl("read_acl");
                topic.write_acl = acl("write_acl");
                if step.args.contains_key("replication_factor") {
                    topic.replication_factor = Some(step.num("replication_factor")?);
                }
                if step.args.contains_key("retention_bytes") {
                    topic.retention_bytes = Some(step.num("retention_bytes")?);
                }
                if step.args.contains_key("idempotent") {
                    topic.idempotent = Some(step.num("idempotent")?);
                }
                if step.args.contains_key("event_sourcing") {
                    topic.event_sourcing = Some(step.num("event_sourcing")?);
                }
                if step.args.contains_key("aggregate_replay") {
                    topic.aggregate_replay = Some(step.num("aggregate_replay")?);
                }
                let info = self.admin(step).await?.create_topic(&topic).await?;
                Ok(json!({"partitions": info.partitions}))
            }
            "delete_topic" => {
                let if_exists = step.args.get("if_exists").is_some_and(|v| v == "true");
                let out = self
                    .admin(step)
                    .await?
                    .delete_topic(step.arg("topic")?, if_exists)
                    .await?;
                Ok(json!({"deleted": out.deleted}))
            }
            "truncate_topic" => {
                let revision = step.num("expected_revision")?;
                let out = self
                    .admin(step)
                    .await?
                    .truncate_topic(step.arg("topic")?, revision)
                    .await?;
                Ok(json!({"revision": out.revision}))
            }
            "alter_topic" => {
                let min: i64 = step.num("min_in_sync_replicas")?;
                let min = u32::try_from(min).ok();
                self.admin(step)
                    .await?
                    .alter_topic_config(step.arg("topic")?, min)
                    .await?;
                Ok(json!({}))
            }
            "cluster_status" => {
                let c = self.admin(step).await?.cluster_status().await?;
                let led_by: serde_json::Map<String, serde_json::Value> = c
                    .partitions
                    .iter()
                    .filter_map(|p| {
                        let leader = p.leader.clone()?;
                        Some((format!("{}/{}", p.topic, p.partition), json!(leader)))
                    })
                    .collect();
                let producers: serde_json::Map<String, serde_json::Value> = c
                    .partitions
                    .iter()
                    .map(|p| (format!("{}/{}", p.topic, p.partition), json!(p.producers)))
                    .collect();
                Ok(json!({
                    "brokers": c.brokers.len(),
                    "partitions": c.partitions.len(),
                    "raft_leader": c.raft_leader,
                    "leaderless": c.leaderless,
                    "under_replicated": c.under_replicated,
                    "led_by": led_by,
                    "voters": c.voters,
                    "learners": c.learners,
                    "transaction_coordinator_shards": c.transaction_coordinator_shards,
                    "producers": producers,
                }))
            }
            "elect_leader" => {
                let partition = step.num("partition")?;
                let e = self
                    .admin(step)
                    .await?
                    .elect_leader(step.arg("topic")?, partition, step.arg("broker")?)
                    .await?;
                Ok(json!({
                    "previous_leader": e.previous_leader,
                    "leader": e.leader,
                    "leader_epoch": e.leader_epoch,
                    "changed": e.changed,
                }))
            }
            "reassign_partition" => {
                let partition = step.num("partition")?;
                let replicas: Vec<&str> = step.arg("replicas")?.split(',').collect();
                let r = self
                    .admin(step)
                    .await?
                    .reassign_partition(step.arg("topic")?, partition, &replicas)
                    .await?;
                Ok(json!({
                    "done": r.done,
                    "replicas": r.replicas,
                    "isr": r.isr,
                    "leader": r.leader,
                    "target": r.target,
                }))
            }
            "list_cluster" => {
                let brokers = self.admin(step).await?.list_cluster().await?;
                let ids: Vec<String> = brokers.into_iter().map(|b| b.id).collect();
                Ok(json!({"brokers": ids}))
            }
            "list_topics" => Ok(json!({"topics": self.admin(step).await?.list_topics().await?})),
            "describe_topic" => {
                let d = self
                    .admin(step)
                    .await?
                    .describe_topic(step.arg("topic")?)
                    .await?;
                Ok(json!({"partitions": d.partitions.len()}))
            }
            "list_offsets" => {
                let (e, l) = self.offsets(step).await?;
                Ok(json!({"earliest": e, "latest": l}))
            }
            "await_earliest" => {
                let min: u64 = step.num("min")?;
                let deadline = Instant::now() + Duration::from_millis(step.num("timeout_ms")?);
                loop {
                    let (earliest, _) = self.offsets(step).await?;
                    if earliest >= min || Instant::now() >= deadline {
                        return Ok(json!({"earliest": earliest}));
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            "producer_open" => {
                let mut config = ProducerConfig::new(bootstrap);
                for (k, v) in &step.config {
                    config.set(k, v)?;
                }
                let producer = Producer::connect(config).await?;
                self.producers
                    .insert(step.arg("name")?.to_string(), producer);
                Ok(json!({}))
            }
            "produce" => {
                let value = match step.bytes("value")? {
                    Some(v) => v,
                    None => {
                        let fill = step.bytes("value_fill")?.unwrap_or_default();
                        let byte = *fill
                            .first()
                            .ok_or_else(|| Failure::Driver("produce: no value".into()))?;
                        vec![byte; step.num("value_len")?]
                    }
                };
                let mut record = ProducerRecord::new(step.arg("topic")?, value);
                if let Some(key) = step.bytes("key")? {
                    record = record.key(key);
                }
                if step.args.contains_key("partition") {
                    record = record.partition(step.num("partition")?);
                }
                if step.args.contains_key("timestamp") {
                    record = record.timestamp(step.num("timestamp")?);
                }
                if let Some(metadata) = self.text(step, "metadata")? {
                    record = record.metadata(metadata);
                }
                if let Some(traceparent) = step.args.get("traceparent") {
                    let tracestate = step.args.get("tracestate").map(String::as_str);
                    record =
                        record.trace_context(cursus::TraceContext::new(traceparent, tracestate)?);
                }
                let meta = self.producer(step)?.send(record).await?.await?;
                Ok(
                    json!({"partition": meta.partition, "offset": meta.offset, "timestamp": meta.timestamp}),
                )
            }
            "produce_many" => {
                let producer = self.producer(step)?;
                let topic = step.arg("topic")?;
                let count: usize = step.num("count")?;
                let value_prefix = step.bytes("value_prefix")?.unwrap_or_default();
                let key_prefix = step.bytes("key_prefix")?;
                let mut deliveries = Vec::with_capacity(count);
                for i in 0..count {
                    let suffix = i.to_string();
                    let mut record =
                        ProducerRecord::new(topic, [&value_prefix[..], suffix.as_bytes()].concat());
                    if let Some(k) = &key_prefix {
                        record = record.key([&k[..], suffix.as_bytes()].concat());
                    }
                    deliveries.push(producer.send(record).await?);
                }
                producer.flush(None).await?;
                let mut partitions = Vec::with_capacity(count);
                for d in deliveries {
                    partitions.push(d.await?.partition);
                }
                Ok(json!({"count": count, "partitions": partitions}))
            }
            "flush" => {
                self.producer(step)?.flush(None).await?;
                Ok(json!({}))
            }
            "producer_close" => {
                let name = step.arg("name")?;
                let p = self
                    .producers
                    .get(name)
                    .ok_or_else(|| missing("producer", name))?;
                p.close(Duration::from_secs(30)).await?;
                Ok(json!({}))
            }
            "consumer_open" => {
                let mut config = ConsumerConfig::default();
                config.set("bootstrap_servers", &bootstrap)?;
                for (k, v) in &step.config {
                    config.set(k, v)?;
                }
                let consumer = Consumer::connect(config).await?;
                self.consumers
                    .insert(step.arg("name")?.to_string(), Arc::new(consumer));
                Ok(json!({}))
            }
            "subscribe" => {
                let subscription = match step.args.get("pattern") {
                    Some(p) => Subscription::Pattern(p.clone()),
                    None => Subscription::Topics(
                        step.arg("topics")?.split(',').map(String::from).collect(),
                    ),
                };
                self.consumer(step)?.subscribe(subscription).await?;
                Ok(json!({}))
            }
            "poll" | "take" => {
                // `take` receives exactly `count` records: each poll asks for
                // at most what is still wanted.
                let exact = step.op == "take";
                let consumer = self.consumer(step)?;
                let want: usize = step.num("count")?;
                let deadline = Instant::now() + Duration::from_millis(step.num("timeout_ms")?);
                let mut records = Vec::new();
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let polled = if exact {
                        consumer
                            .poll_max(left, (want - records.len()).max(1))
                            .await?
                    } else {
                        consumer.poll(left).await?
                    };
                    records.extend(polled.iter().map(record_json));
                    if records.len() >= want.max(1) || Instant::now() >= deadline {
                        break;
                    }
                }
                Ok(json!({"records": records}))
            }
            "poll_once" => {
                // One call of poll: empty before its deadline only when woken.
                let timeout = Duration::from_millis(step.num("timeout_ms")?);
                let start = Instant::now();
                let polled = self.consumer(step)?.poll(timeout).await?;
                let early_empty = polled.is_empty() && start.elapsed() < timeout;
                let records: Vec<Value> = polled.iter().map(record_json).collect();
                Ok(json!({"records": records, "early_empty": early_empty}))
            }
            "wakeup" => {
                self.consumer(step)?.wakeup();
                Ok(json!({}))
            }
            "commit" => {
                self.consumer(step)?.commit_sync().await?;
                Ok(json!({}))
            }
            "commit_offsets" => {
                let tp = TopicPartition::new(step.arg("topic")?, step.num("partition")?);
                self.consumer(step)?
                    .commit_offsets(&[(tp, step.num("offset")?)])
                    .await?;
                Ok(json!({}))
            }
            "committed" => {
                let tp = TopicPartition::new(step.arg("topic")?, step.num("partition")?);
                Ok(json!({"offset": self.consumer(step)?.committed(&tp).await?}))
            }
            "assignment" => {
                let parts: Vec<String> = self
                    .consumer(step)?
                    .assignment()
                    .await?
                    .iter()
                    .map(|tp| format!("{}:{}", tp.topic, tp.partition))
                    .collect();
                Ok(json!({"partitions": parts}))
            }
            "seek" => {
                let tp = TopicPartition::new(step.arg("topic")?, step.num("partition")?);
                self.consumer(step)?.seek(&tp, step.num("offset")?).await?;
                Ok(json!({}))
            }
            "position" => {
                let tp = TopicPartition::new(step.arg("topic")?, step.num("partition")?);
                Ok(json!({"offset": self.consumer(step)?.position(&tp).await?}))
            }
            "pause" => {
                let partitions = partition_list(step.arg("partitions")?)?;
                self.consumer(step)?.pause(&partitions).await?;
                Ok(json!({}))
            }
            "resume" => {
                let partitions = partition_list(step.arg("partitions")?)?;
                self.consumer(step)?.resume(&partitions).await?;
                Ok(json!({}))
            }
            "paused" => {
                let paused = self.consumer(step)?.paused().await?;
                Ok(json!({"partitions": paused.iter().map(tp_name).collect::<Vec<_>>()}))
            }
            "committed_list" => {
                let partitions = partition_list(step.arg("partitions")?)?;
                let committed = self.consumer(step)?.committed_offsets(&partitions).await?;
                Ok(json!({"committed": committed.iter().map(|(_, o)| *o).collect::<Vec<_>>()}))
            }
            "rebalance_listen" => {
                let name = step.arg("consumer")?.to_string();
                let consumer = Arc::downgrade(
                    self.consumers
                        .get(&name)
                        .ok_or_else(|| missing("consumer", &name))?,
                );
                let seek_to: Option<u64> = match step.args.get("seek_to") {
                    Some(_) => Some(step.num("seek_to")?),
                    None => None,
                };
                let commit = step.args.get("commit_on_revoke").map(String::as_str) == Some("true");
                let events = Arc::clone(self.rebalance_events.entry(name).or_default());
                let runtime = tokio::runtime::Handle::current();
                // Runs on the consumer's listener thread, which may block on
                // the consumer's own async calls.
                let listener = move |event: &RebalanceEvent| {
                    let mut parts: Vec<String> = event.partitions().iter().map(tp_name).collect();
                    parts.sort();
                    let mut entry = json!({"kind": event.kind(), "partitions": parts});
                    if let Some(c) = consumer.upgrade() {
                        match event {
                            RebalanceEvent::Assigned(tps) => {
                                for tp in tps.iter().filter(|_| seek_to.is_some()) {
                                    let _ = runtime.block_on(c.seek(tp, seek_to.unwrap_or(0)));
                                }
                            }
                            RebalanceEvent::Revoked(_) if commit => {
                                if let Err(e) = runtime.block_on(c.commit_sync()) {
                                    entry["commit_error"] = json!(e.code());
                                }
                            }
                            _ => {}
                        }
                    }
                    events.lock().unwrap_or_else(|p| p.into_inner()).push(entry);
                };
                self.consumer(step)?
                    .set_rebalance_listener(Some(Arc::new(listener)));
                Ok(json!({}))
            }
            "rebalance_events" => {
                let name = step.arg("consumer")?;
                let events = self
                    .rebalance_events
                    .get(name)
                    .ok_or_else(|| missing("rebalance listener of", name))?;
                let events = events.lock().unwrap_or_else(|p| p.into_inner()).clone();
                Ok(json!({"events": events}))
            }
            "consumer_close" => {
                let name = step.arg("name")?;
                self.consumers
                    .get(name)
                    .ok_or_else(|| missing("consumer", name))?
                    .close()
                    .await?;
                Ok(json!({}))
            }
            "txn_init" => {
                self.producer(step)?.init_transactions().await?;
                Ok(json!({}))
            }
            "txn_begin" => {
                self.producer(step)?.begin_transaction().await?;
                Ok(json!({}))
            }
            "txn_send_offsets" => {
                let consumer = self.consumer(step)?;
                self.producer(step)?.send_consumer_offsets(consumer).await?;
                Ok(json!({}))
            }
            "txn_commit" => {
                self.producer(step)?.commit_transaction().await?;
                Ok(json!({}))
            }
            "txn_abort" => {
                self.producer(step)?.abort_transaction().await?;
                Ok(json!({}))
            }
            "es_open" => {
                let mut config = ClientConfig::new(bootstrap);
                for (k, v) in &step.config {
                    config.set(k, v)?;
                }
                let store = EventStore::connect(config).await?;
                self.stores.insert(step.arg("name")?.to_string(), store);
                Ok(json!({}))
            }
            "es_close" => {
                let name = step.arg("name")?;
                self.stores
                    .get(name)
                    .ok_or_else(|| missing("store", name))?
                    .close()
                    .await;
                Ok(json!({}))
            }
            "es_append" | "es_append_id" => {
                let event = Event {
                    event_type: step.args.get("event_type").cloned().unwrap_or_default(),
                    payload: self.text(step, "value")?.unwrap_or_default(),
                    metadata: self.text(step, "metadata")?.unwrap_or_default(),
                    schema_version: match step.args.get("schema_version") {
                        Some(_) => Some(step.num("schema_version")?),
                        None => None,
                    },
                    event_id: step.args.get("event_id").cloned(),
                };
                let key = self.text(step, "key")?.unwrap_or_default();
                let a = self
                    .store(step)?
                    .append(
                        step.arg("topic")?,
                        &key,
                        step.num("expected_version")?,
                        &event,
                    )
                    .await?;
                Ok(json!({"version": a.version, "offset": a.offset, "partition": a.partition}))
            }
            "es_stream_version" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let v = self
                    .store(step)?
                    .stream_version(step.arg("topic")?, &key)
                    .await?;
                Ok(json!({"version": v}))
            }
            "es_save_snapshot" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let state = self.text(step, "state")?.unwrap_or_default();
                self.store(step)?
                    .save_snapshot(step.arg("topic")?, &key, step.num("version")?, &state)
                    .await?;
                Ok(json!({}))
            }
            "es_read_snapshot" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let s = self
                    .store(step)?
                    .read_snapshot(step.arg("topic")?, &key)
                    .await?;
                Ok(json!({"snapshot": snapshot_json(s.as_ref())}))
            }
            "es_read_stream" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let cursor = Cursor::stream(step.arg("topic")?, key, step.num("from_version")?)
                    .with_limits(PageLimits {
                        max_records: optional_num(step, "max_events")?,
                        max_bytes: None,
                    });
                let (snapshot, records, _, pages) = self.all_pages(step, cursor).await?;
                Ok(
                    json!({"snapshot": snapshot_json(snapshot.as_ref()), "records": records, "pages": pages}),
                )
            }
            "es_history" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let cursor = Cursor::history(
                    step.arg("topic")?,
                    key,
                    step.num("from_version")?,
                    optional_num(step, "to_version")?,
                )
                .with_limits(PageLimits {
                    max_records: optional_num(step, "max_records")?,
                    max_bytes: None,
                });
                let (_, records, last, pages) = self.all_pages(step, cursor).await?;
                let last = last.ok_or_else(|| Failure::Driver("es_history: no page".into()))?;
                Ok(json!({"records": records, "pages": pages,
                          "completeness": last.completeness.map(|c| c.as_str()),
                          "head_version": last.head_version}))
            }
            "es_browse" => {
                let cursor = Cursor::browse(
                    step.arg("topic")?,
                    step.num("partition")?,
                    step.num("from_offset")?,
                    optional_num(step, "to_offset")?,
                )
                .with_limits(PageLimits {
                    max_records: optional_num(step, "max_records")?,
                    max_bytes: None,
                });
                let (_, records, _, pages) = self.all_pages(step, cursor).await?;
                Ok(json!({"records": records, "pages": pages}))
            }
            "es_aggregate" => {
                let store = self.store(step)?;
                let key = self.text(step, "key")?.unwrap_or_default();
                let prefix = self.text(step, "value_prefix")?.unwrap_or_default();
                let (mut aggregate, snapshot, events) =
                    Aggregate::load(store, step.arg("topic")?, &key, step.num("snapshot_every")?)
                        .await?;
                let mut state: u64 = match &snapshot {
                    Some(s) => s.payload.parse().map_err(|_| {
                        Failure::Driver(format!("snapshot state {:?} is no counter", s.payload))
                    })?,
                    None => 0,
                };
                state += events.len() as u64;
                let id_prefix = step.args.get("event_id_prefix");
                let mut last_offset = None;
                for i in 0..step.num::<u64>("appends")? {
                    let mut event = Event::new("Counted", format!("{prefix}{i}"));
                    if let Some(id) = id_prefix {
                        event = event.event_id(format!("{id}{i}"));
                    }
                    let stored = aggregate.append(store, &event).await?;
                    last_offset = Some(stored.offset);
                    state += 1;
                    aggregate.auto_snapshot(store, &state.to_string()).await;
                }
                Ok(json!({"version": aggregate.version(), "state": state,
                          "loaded_snapshot_version": snapshot.map(|s| s.version),
                          "loaded_events": events.len(), "last_offset": last_offset}))
            }
            "es_replay_proof" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let proof = self
                    .store(step)?
                    .replay_proof(
                        step.arg("topic")?,
                        &key,
                        optional_num(step, "expected_last_sequence")?,
                    )
                    .await?;
                Ok(
                    json!({"status": proof.status, "event_count": proof.event_count,
                          "earliest_sequence": proof.earliest_retained_sequence,
                          "latest_sequence": proof.latest_retained_sequence,
                          "first_event_id": proof.first_event_id, "last_event_id": proof.last_event_id,
                          "sequence_complete": proof.sequence_complete,
                          "retention_complete": proof.retention_complete_from_sequence_one}),
                )
            }
            "es_event_range" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let (proof, events) = self
                    .store(step)?
                    .event_range(
                        step.arg("topic")?,
                        &key,
                        step.num("from_sequence")?,
                        step.num("to_sequence")?,
                        optional_num(step, "max_records")?,
                    )
                    .await?;
                let records: Vec<Value> = events
                    .iter()
                    .map(|e| json!({"offset": e.offset, "version": e.event_sequence, "event_id": e.event_id,
                                    "event_type": e.event_type, "value": hex::encode(&e.payload)}))
                    .collect();
                Ok(json!({"status": proof.status, "records": records}))
            }
            "txn_append_stream" => {
                let key = self.text(step, "key")?.unwrap_or_default();
                let event = Event {
                    event_type: step.args.get("event_type").cloned().unwrap_or_default(),
                    payload: self.text(step, "value")?.unwrap_or_default(),
                    event_id: step.args.get("event_id").cloned(),
                    ..Default::default()
                };
                let a = self
                    .producer(step)?
                    .append_stream(
                        step.arg("topic")?,
                        &key,
                        step.num("expected_version")?,
                        &event,
                    )
                    .await?;
                Ok(json!({"version": a.version, "offset": a.offset, "partition": a.partition}))
            }
            other => Err(Failure::Driver(format!("unknown op {other}"))),
        }
    }

    async fn offsets(&mut self, step: &Step) -> Result<(u64, u64), Failure> {
        let partition: u32 = step.num("partition")?;
        let all = self
            .admin(step)
            .await?
            .list_offsets(step.arg("topic")?, Some(partition))
            .await?;
        let p = all
            .iter()
            .find(|o| o.partition == partition)
            .ok_or_else(|| {
                Failure::Driver(format!("list_offsets: no partition {partition} in reply"))
            })?;
        Ok((p.earliest, p.latest))
    }
}

fn error_json(failure: Failure) -> Value {
    match failure {
        Failure::Cursus(e) => {
            let fields: Map<String, Value> = e
                .fields()
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            json!({"code": e.code(), "class": e.class().name(), "retryable": e.retryable(), "fields": fields})
        }
        Failure::Driver(message) => {
            eprintln!("driver error: {message}");
            json!({"code": "driver_error", "class": "internal", "retryable": false, "fields": {}})
        }
    }
}

/// A polled record as the protocol prints it.
fn record_json(r: &cursus::ConsumerRecord) -> Value {
    let event = r.event.as_ref();
    // The context as the binding reads it, never parsed here.
    let context = r.trace_context();
    json!({"topic": r.topic, "partition": r.partition, "offset": r.offset,
           "key": r.key.as_ref().map(hex::encode), "value": hex::encode(&r.payload),
           "timestamp": r.timestamp,
           "metadata": r.metadata.as_ref().map(hex::encode),
           "traceparent": context.as_ref().map(|c| c.traceparent().to_owned()),
           "tracestate": context.as_ref().and_then(|c| c.tracestate().map(str::to_owned)),
           "event_type": event.map(|e| e.event_type.clone()),
           "aggregate_version": event.map(|e| e.aggregate_version)})
}

fn tp_name(tp: &TopicPartition) -> String {
    format!("{}:{}", tp.topic, tp.partition)
}

/// `topic:p,topic:p` as partitions.
fn partition_list(text: &str) -> Result<Vec<TopicPartition>, Failure> {
    text.split(',')
        .map(|item| {
            let (topic, p) = item
                .rsplit_once(':')
                .ok_or_else(|| Failure::Driver(format!("not topic:partition: {item}")))?;
            let p = p
                .parse()
                .map_err(|_| Failure::Driver(format!("bad partition in {item}")))?;
            Ok(TopicPartition::new(topic, p))
        })
        .collect()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: {} <bootstrap host:port> <plan file>", args[0]);
        std::process::exit(2);
    }
    let plan = std::fs::read_to_string(&args[2]).unwrap_or_else(|e| {
        eprintln!("cannot read plan {}: {e}", args[2]);
        std::process::exit(2);
    });
    let mut driver = Driver {
        bootstrap: args[1].clone(),
        admins: HashMap::new(),
        producers: HashMap::new(),
        consumers: HashMap::new(),
        rebalance_events: HashMap::new(),
        stores: HashMap::new(),
    };
    let lines = plan
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let mut out = std::io::stdout().lock();
    for (n, line) in lines.enumerate() {
        let outcome = match parse_step(line) {
            Ok(step) => driver.run(&step).await,
            Err(e) => Err(Failure::Driver(e)),
        };
        let report = match outcome {
            Ok(result) => json!({"step": n, "ok": true, "result": result}),
            Err(f) => json!({"step": n, "ok": false, "error": error_json(f)}),
        };
        writeln!(out, "{report}")
            .and_then(|_| out.flush())
            .expect("stdout");
    }
}

/// An optional numeric argument.
fn optional_num<T: std::str::FromStr>(step: &Step, name: &str) -> Result<Option<T>, Failure> {
    match step.args.get(name) {
        Some(_) => step.num(name).map(Some),
        None => Ok(None),
    }
}

/// A snapshot as the es ops report it.
fn snapshot_json(s: Option<&Snapshot>) -> Value {
    match s {
        Some(s) => json!({"version": s.version, "state": hex::encode(&s.payload)}),
        None => Value::Null,
    }
}

/// An event (or browsed record) as the es ops report it.
fn event_json(e: &StoredEvent) -> Value {
    let key = (!e.key.is_empty()).then(|| hex::encode(&e.key));
    json!({"topic": e.topic, "partition": e.partition, "offset": e.offset, "key": key,
           "value": hex::encode(&e.payload), "version": e.version, "event_type": e.event_type,
           "schema_version": e.schema_version, "metadata": hex::encode(&e.metadata)})
}
