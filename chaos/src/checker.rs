//! The checker: once the killer stopped and the workloads drained, fresh
//! clients read everything back and compare it with the ledger.
//!
//! - Idempotent producers: every acknowledged value is at its
//!   acknowledged partition and offset (else *lost*); no value appears
//!   twice (*duplicated*); each producer's values keep their order within
//!   a partition (*reordered*, checked over every value read, acknowledged
//!   or not).
//! - Transactions (read_committed): a committed transaction is wholly
//!   visible, an aborted one wholly invisible, one with an unknown outcome
//!   either; anything else is *partial*. Every acknowledged input is in the
//!   committed output at most once, and exactly once when the processor
//!   drained the input.
//! - Event store: every aggregate's versions are 1..n without a gap
//!   (*es_gaps*) and every acknowledged version holds the acknowledged
//!   payload (*es_lost*).
//! - Offsets: each consumer's acknowledged commits of a partition never go
//!   back, the monitor's readings never go back, and the final committed
//!   offset is at least the largest acknowledged commit (*offsets_backward*).
//!
//! Reading "to the end" is made exact with sentinels: after the drain one
//! record is written to every partition, and a partition is read once its
//! sentinel arrived.

use crate::ledger::{lock, Ledger, TxnOutcome};
use crate::workload::{
    client_config, consumer_config, consumers, partitions, producer_config, producers,
    transactions, ES_TOPIC, IDEM_PARTITIONS, IDEM_TOPIC, TXN_OUT_PARTITIONS, TXN_OUT_TOPIC,
};
use cursus::consumer::{Consumer, Subscription};
use cursus::eventstore::EventStore;
use cursus::producer::{Producer, ProducerRecord};
use cursus::TopicPartition;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// Violations printed at most (the counts are always complete).
const MAX_PRINTED: usize = 50;

/// What the checker found.
#[derive(Debug, Default)]
pub struct Report {
    /// Acknowledged records of the idempotent producers.
    pub acknowledged: u64,
    /// Records read back (both record topics, sentinels excluded).
    pub read: u64,
    /// Acknowledged records not found at their partition and offset.
    pub lost: u64,
    /// Values of an idempotent producer seen more than once.
    pub duplicated: u64,
    /// Values out of their producer's order within a partition.
    pub reordered: u64,
    /// Transactions the producer saw committed.
    pub txn_committed: u64,
    /// Transactions aborted (by the loop or the broker).
    pub txn_aborted: u64,
    /// Transactions with an unknown outcome.
    pub txn_unknown: u64,
    /// Transactions neither wholly visible nor wholly invisible as their
    /// outcome requires.
    pub txn_partial: u64,
    /// Inputs in the committed output more than once.
    pub txn_eos_duplicated: u64,
    /// Acknowledged inputs missing from the committed output (only counted
    /// when the processor drained the input).
    pub txn_eos_missing: u64,
    /// Events read back from all aggregates.
    pub es_events: u64,
    /// Acknowledged event-store appends.
    pub es_acknowledged: u64,
    /// Version gaps (or misplaced versions) in the streams.
    pub es_gaps: u64,
    /// Acknowledged versions missing or holding another payload.
    pub es_lost: u64,
    /// Committed offsets that went back (or lost an acknowledged commit).
    pub offsets_backward: u64,
    /// `--cluster`: records a partition reader saw during the run that
    /// read back different or not at all (a visible record rewritten or
    /// truncated by a failover).
    pub visible_changed: u64,
    /// Every violation, described.
    pub violations: Vec<String>,
}

impl Report {
    fn violation(&mut self, what: String) {
        self.violations.push(what);
    }

    /// Prints the violations (capped at [`MAX_PRINTED`]).
    pub fn print_violations(&self) {
        for v in self.violations.iter().take(MAX_PRINTED) {
            eprintln!("chaos: VIOLATION {v}");
        }
        if self.violations.len() > MAX_PRINTED {
            eprintln!(
                "chaos: … and {} more violations",
                self.violations.len() - MAX_PRINTED
            );
        }
    }
}

/// A record read back.
struct Read {
    partition: u32,
    offset: u64,
    value: Vec<u8>,
}

fn sentinel(topic: &str, partition: u32) -> String {
    format!("end-{topic}-{partition}")
}

/// Writes one sentinel record to every partition of the record topics.
async fn write_sentinels(addr: &str) -> Result<(), String> {
    let producer = Producer::connect(producer_config(addr, &[]))
        .await
        .map_err(|e| format!("sentinel producer: {e}"))?;
    for (topic, partitions) in [
        (IDEM_TOPIC, IDEM_PARTITIONS),
        (TXN_OUT_TOPIC, TXN_OUT_PARTITIONS),
    ] {
        for p in 0..partitions {
            let d = producer
                .send(ProducerRecord::new(topic, sentinel(topic, p)).partition(p))
                .await
                .map_err(|e| format!("sentinel {topic}/{p}: {e}"))?;
            d.await.map_err(|e| format!("sentinel {topic}/{p}: {e}"))?;
        }
    }
    let _ = producer.close(Duration::from_secs(10)).await;
    Ok(())
}

/// Reads `topic` from the beginning (read_committed, a new group) until
/// every partition's sentinel arrived.
async fn read_topic(
    addr: &str,
    topic: &str,
    partitions: u32,
    group: &str,
) -> Result<Vec<Read>, String> {
    let consumer = Consumer::connect(consumer_config(addr, group, 1000))
        .await
        .map_err(|e| format!("checker consumer: {e}"))?;
    consumer
        .subscribe(Subscription::Topics(vec![topic.into()]))
        .await
        .map_err(|e| format!("checker subscribe: {e}"))?;
    let mut out = Vec::new();
    let mut done: HashSet<u32> = HashSet::new();
    let give_up = Instant::now() + Duration::from_secs(300);
    while done.len() < partitions as usize {
        if Instant::now() > give_up {
            return Err(format!(
                "{topic}: sentinels of partitions {:?} not read within 300 s",
                (0..partitions)
                    .filter(|p| !done.contains(p))
                    .collect::<Vec<_>>()
            ));
        }
        let records = consumer
            .poll(Duration::from_secs(1))
            .await
            .map_err(|e| format!("checker poll {topic}: {e}"))?;
        for r in records {
            if r.payload.as_ref() == sentinel(topic, r.partition).as_bytes() {
                done.insert(r.partition);
            } else {
                out.push(Read {
                    partition: r.partition,
                    offset: r.offset,
                    value: r.payload.to_vec(),
                });
            }
        }
    }
    let _ = consumer.close().await;
    Ok(out)
}

/// Reads everything back and checks it against `ledger`.
pub async fn check(
    addr: &str,
    ledger: &Ledger,
    aggregates: &[String],
    nonce: u64,
) -> Result<Report, String> {
    let mut report = Report::default();
    write_sentinels(addr).await?;
    let idem = read_topic(
        addr,
        IDEM_TOPIC,
        IDEM_PARTITIONS,
        &format!("chaos-check-{nonce}-a"),
    )
    .await?;
    let out = read_topic(
        addr,
        TXN_OUT_TOPIC,
        TXN_OUT_PARTITIONS,
        &format!("chaos-check-{nonce}-b"),
    )
    .await?;
    report.read = (idem.len() + out.len()) as u64;
    check_idempotent(&mut report, ledger, &idem);
    check_transactions(&mut report, ledger, &out);
    check_event_store(&mut report, ledger, addr, aggregates).await?;
    check_offsets(&mut report, ledger, addr).await?;
    Ok(report)
}

/// The `--cluster` check: the single-broker run's checks ([`check`]),
/// except that [`IDEM_TOPIC`] is read back by explicit partition (see
/// `workload::partitions`), plus the partition readers' check (nothing they
/// saw changed: `visible_changed`).
pub async fn check_cluster(
    bootstrap: &str,
    ledger: &Ledger,
    aggregates: &[String],
    nonce: u64,
) -> Result<Report, String> {
    let mut report = Report::default();
    write_sentinels(bootstrap).await?;
    let mut idem = Vec::new();
    for p in 0..IDEM_PARTITIONS {
        let records =
            partitions::read_until(bootstrap, IDEM_TOPIC, p, &sentinel(IDEM_TOPIC, p)).await?;
        idem.extend(records.into_iter().map(|(offset, value)| Read {
            partition: p,
            offset,
            value,
        }));
    }
    let out = read_topic(
        bootstrap,
        TXN_OUT_TOPIC,
        TXN_OUT_PARTITIONS,
        &format!("chaos-check-{nonce}-b"),
    )
    .await?;
    report.read = (idem.len() + out.len()) as u64;
    check_idempotent(&mut report, ledger, &idem);
    check_transactions(&mut report, ledger, &out);
    check_event_store(&mut report, ledger, bootstrap, aggregates).await?;
    check_offsets(&mut report, ledger, bootstrap).await?;
    let at: HashMap<(u32, u64), &[u8]> = idem
        .iter()
        .map(|r| ((r.partition, r.offset), r.value.as_slice()))
        .collect();
    let seen = lock(&ledger.partition_reads).clone();
    let mut seen: Vec<_> = seen.into_iter().collect();
    seen.sort();
    for ((p, o), v) in seen {
        match at.get(&(p, o)) {
            Some(now) if *now == v.as_slice() => {}
            now => {
                report.visible_changed += 1;
                report.violation(format!(
                    "visible_changed: a reader saw {:?} at {IDEM_TOPIC}/{p}@{o} during the run, \
                     the checker reads {}",
                    String::from_utf8_lossy(&v),
                    now.map_or("nothing".into(), |n| format!(
                        "{:?}",
                        String::from_utf8_lossy(n)
                    ))
                ));
            }
        }
    }
    Ok(report)
}

fn check_idempotent(report: &mut Report, ledger: &Ledger, read: &[Read]) {
    let at: HashMap<(u32, u64), &[u8]> = read
        .iter()
        .map(|r| ((r.partition, r.offset), r.value.as_slice()))
        .collect();
    let acked = lock(&ledger.produced);
    report.acknowledged = acked.len() as u64;
    for a in acked.iter() {
        let want = producers::value(a.producer, a.seq);
        match at.get(&(a.partition, a.offset)) {
            Some(v) if *v == want.as_bytes() => {}
            found => {
                report.lost += 1;
                report.violation(format!(
                    "lost: {want} acknowledged at {IDEM_TOPIC}/{}@{} but read {}",
                    a.partition,
                    a.offset,
                    found.map_or("nothing".into(), |v| format!(
                        "{:?}",
                        String::from_utf8_lossy(v)
                    ))
                ));
            }
        }
    }
    drop(acked);
    let mut seen: HashMap<(u32, u64), (u32, u64)> = HashMap::new();
    // Last sequence read of each (producer, partition), in offset order.
    let mut last: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
    let mut ordered: Vec<&Read> = read.iter().collect();
    ordered.sort_by_key(|r| (r.partition, r.offset));
    for r in ordered {
        let Some((producer, seq)) = producers::parse_value(&r.value) else {
            report.violation(format!(
                "unexpected record {:?} at {IDEM_TOPIC}/{}@{}",
                String::from_utf8_lossy(&r.value),
                r.partition,
                r.offset
            ));
            continue;
        };
        if let Some((p, o)) = seen.insert((producer, seq), (r.partition, r.offset)) {
            report.duplicated += 1;
            report.violation(format!(
                "duplicated: {} at {IDEM_TOPIC}/{p}@{o} and {IDEM_TOPIC}/{}@{}",
                producers::value(producer, seq),
                r.partition,
                r.offset
            ));
        }
        if let Some((prev, prev_offset)) = last.insert((producer, r.partition), (seq, r.offset)) {
            if seq <= prev {
                report.reordered += 1;
                report.violation(format!(
                    "reordered: {} at {IDEM_TOPIC}/{}@{} after {} at offset {prev_offset}",
                    producers::value(producer, seq),
                    r.partition,
                    r.offset,
                    producers::value(producer, prev)
                ));
            }
        }
    }
}

fn check_transactions(report: &mut Report, ledger: &Ledger, read: &[Read]) {
    // Visible (index -> count) per transaction number.
    let mut visible: BTreeMap<u64, Vec<(u32, u32)>> = BTreeMap::new();
    let mut inputs: HashMap<String, u32> = HashMap::new();
    for r in read {
        match transactions::parse_output(&r.value) {
            Some((number, index, count, input)) => {
                visible.entry(number).or_default().push((index, count));
                *inputs.entry(input).or_default() += 1;
            }
            None => report.violation(format!(
                "unexpected record {:?} at {TXN_OUT_TOPIC}/{}@{}",
                String::from_utf8_lossy(&r.value),
                r.partition,
                r.offset
            )),
        }
    }
    let attempts = lock(&ledger.txns).clone();
    let mut known = HashSet::new();
    for t in &attempts {
        known.insert(t.number);
        match t.outcome {
            TxnOutcome::Committed => report.txn_committed += 1,
            TxnOutcome::Aborted => report.txn_aborted += 1,
            TxnOutcome::Unknown => report.txn_unknown += 1,
        }
        let seen = visible.get(&t.number).map_or(&[][..], Vec::as_slice);
        let mut indices: Vec<u32> = seen.iter().map(|(i, _)| *i).collect();
        indices.sort_unstable();
        let whole = indices == (0..t.records).collect::<Vec<_>>()
            && seen.iter().all(|(_, c)| *c == t.records);
        let none = seen.is_empty();
        let fine = match t.outcome {
            TxnOutcome::Committed => whole,
            TxnOutcome::Aborted => none,
            TxnOutcome::Unknown => whole || none,
        };
        if !fine {
            report.txn_partial += 1;
            report.violation(format!(
                "transaction {} ({:?}, {} records{}): read_committed shows indices {indices:?}",
                t.number,
                t.outcome,
                t.records,
                t.error
                    .as_deref()
                    .map_or(String::new(), |e| format!(", error: {e}"))
            ));
        }
    }
    for (number, seen) in &visible {
        if !known.contains(number) {
            report.txn_partial += 1;
            report.violation(format!(
                "transaction {number} is not in the ledger but {} of its records are visible",
                seen.len()
            ));
        }
    }
    for (input, n) in &inputs {
        if *n > 1 {
            report.txn_eos_duplicated += 1;
            report.violation(format!(
                "input {input} is in the committed output {n} times"
            ));
        }
    }
    if ledger.txn_drained.load(Ordering::SeqCst) {
        for input in lock(&ledger.txn_inputs).iter() {
            if !inputs.contains_key(input) {
                report.txn_eos_missing += 1;
                report.violation(format!(
                    "acknowledged input {input} is not in the committed output (the processor drained the input)"
                ));
            }
        }
    } else {
        report.violation(
            "the transactional processor did not consume its input to the end after the killer stopped"
                .into(),
        );
    }
}

async fn check_event_store(
    report: &mut Report,
    ledger: &Ledger,
    addr: &str,
    aggregates: &[String],
) -> Result<(), String> {
    let store = EventStore::connect(client_config(addr))
        .await
        .map_err(|e| format!("checker event store: {e}"))?;
    let acked = lock(&ledger.es_appends).clone();
    report.es_acknowledged = acked.len() as u64;
    for aggregate in aggregates {
        let (_, events) = store
            .read_stream(ES_TOPIC, aggregate, 1)
            .await
            .map_err(|e| format!("read_stream {aggregate}: {e}"))?;
        report.es_events += events.len() as u64;
        for (i, e) in events.iter().enumerate() {
            if e.version != i as u64 + 1 {
                report.es_gaps += 1;
                report.violation(format!(
                    "event stream {aggregate}: event #{} has version {} (offset {})",
                    i + 1,
                    e.version,
                    e.offset
                ));
            }
        }
        let by_version: HashMap<u64, &[u8]> = events
            .iter()
            .map(|e| (e.version, e.payload.as_ref()))
            .collect();
        for a in acked.iter().filter(|a| &a.aggregate == aggregate) {
            match by_version.get(&a.version) {
                Some(p) if *p == a.payload.as_bytes() => {}
                found => {
                    report.es_lost += 1;
                    report.violation(format!(
                        "event stream {aggregate}: acknowledged version {} ({}) reads back {}",
                        a.version,
                        a.payload,
                        found.map_or("nothing".into(), |p| format!(
                            "{:?}",
                            String::from_utf8_lossy(p)
                        ))
                    ));
                }
            }
        }
    }
    store.close().await;
    Ok(())
}

async fn check_offsets(report: &mut Report, ledger: &Ledger, addr: &str) -> Result<(), String> {
    // Each consumer's own acknowledged commits, in the order it got them.
    let commits = lock(&ledger.commits).clone();
    let mut last: HashMap<(String, u32, u32), u64> = HashMap::new();
    let mut max_acked: HashMap<(String, String, u32), u64> = HashMap::new();
    for c in &commits {
        if let Some(prev) = last.insert((c.group.clone(), c.consumer, c.partition), c.offset) {
            if c.offset < prev {
                report.offsets_backward += 1;
                report.violation(format!(
                    "group {} consumer {} committed {}/{} = {} after {prev}",
                    c.group, c.consumer, c.topic, c.partition, c.offset
                ));
            }
        }
        let m = max_acked
            .entry((c.group.clone(), c.topic.clone(), c.partition))
            .or_default();
        *m = (*m).max(c.offset);
    }
    // The monitor's readings, in the order it made them.
    let mut seen: HashMap<(String, String, u32), u64> = HashMap::new();
    for s in lock(&ledger.committed_samples).iter() {
        let key = (s.group.clone(), s.topic.clone(), s.partition);
        if let Some(prev) = seen.insert(key, s.offset) {
            if s.offset < prev {
                report.offsets_backward += 1;
                report.violation(format!(
                    "group {} committed offset of {}/{} went back from {prev} to {}",
                    s.group, s.topic, s.partition, s.offset
                ));
            }
        }
    }
    // The final committed offsets, fetched afresh.
    for (group, topic, partitions) in consumers::watched() {
        let c = Consumer::connect(consumer_config(addr, group, 1))
            .await
            .map_err(|e| format!("checker offsets client: {e}"))?;
        for partition in 0..partitions {
            let tp = TopicPartition::new(topic, partition);
            let committed = c
                .committed(&tp)
                .await
                .map_err(|e| format!("fetch committed {group} {tp:?}: {e}"))?;
            let key = (group.to_owned(), topic.to_owned(), partition);
            let floor = max_acked.get(&key).copied().max(seen.get(&key).copied());
            if let Some(floor) = floor {
                if committed.unwrap_or(0) < floor {
                    report.offsets_backward += 1;
                    report.violation(format!(
                        "group {group} {topic}/{partition}: final committed offset {committed:?} \
                         is below {floor}, acknowledged or seen before"
                    ));
                }
            }
        }
        let _ = c.close().await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Acked, TxnAttempt};

    fn read(partition: u32, offset: u64, value: &str) -> Read {
        Read {
            partition,
            offset,
            value: value.as_bytes().to_vec(),
        }
    }

    fn acked(producer: u32, seq: u64, partition: u32, offset: u64) -> Acked {
        Acked {
            producer,
            seq,
            partition,
            offset,
        }
    }

    #[test]
    fn idempotent_violations_are_counted() {
        let ledger = Ledger::default();
        lock(&ledger.produced).extend([
            acked(0, 1, 0, 0),
            acked(0, 2, 0, 1),
            acked(0, 3, 0, 2),
            acked(1, 1, 1, 0),
        ]);
        let fine = [
            read(0, 0, "idem-0-1"),
            read(0, 1, "idem-0-2"),
            read(0, 2, "idem-0-3"),
            read(1, 0, "idem-1-1"),
        ];
        let mut report = Report::default();
        check_idempotent(&mut report, &ledger, &fine);
        assert!(report.violations.is_empty(), "{:?}", report.violations);

        // idem-0-3 lost, idem-0-2 written twice (after idem-0-4: reordered).
        let bad = [
            read(0, 0, "idem-0-1"),
            read(0, 1, "idem-0-2"),
            read(0, 2, "idem-0-4"),
            read(0, 3, "idem-0-2"),
            read(1, 0, "idem-1-1"),
        ];
        let mut report = Report::default();
        check_idempotent(&mut report, &ledger, &bad);
        assert_eq!(
            (report.lost, report.duplicated, report.reordered),
            (1, 1, 1)
        );
    }

    fn attempt(number: u64, records: u32, outcome: TxnOutcome) -> TxnAttempt {
        TxnAttempt {
            number,
            records,
            outcome,
            error: None,
        }
    }

    #[test]
    fn transactions_must_be_all_or_nothing() {
        let ledger = Ledger::default();
        ledger.txn_drained.store(true, Ordering::SeqCst);
        lock(&ledger.txn_inputs).extend(["in-1".to_owned(), "in-2".into(), "in-3".into()]);
        lock(&ledger.txns).extend([
            attempt(1, 2, TxnOutcome::Committed),
            attempt(2, 1, TxnOutcome::Aborted),
            attempt(3, 1, TxnOutcome::Committed),
            attempt(4, 2, TxnOutcome::Unknown),
        ]);
        let out = [
            read(0, 0, &transactions::output_value(1, 0, 2, "in-1")),
            read(1, 0, &transactions::output_value(1, 1, 2, "in-2")),
            read(2, 0, &transactions::output_value(3, 0, 1, "in-3")),
        ];
        let mut report = Report::default();
        check_transactions(&mut report, &ledger, &out);
        assert!(report.violations.is_empty(), "{:?}", report.violations);
        assert_eq!(
            (report.txn_committed, report.txn_aborted, report.txn_unknown),
            (2, 1, 1)
        );

        // Half of the unknown transaction, the aborted one, half of a
        // committed one: three partial transactions, in-3 twice and in-2
        // never.
        let out = [
            read(0, 0, &transactions::output_value(1, 0, 2, "in-1")),
            read(2, 0, &transactions::output_value(3, 0, 1, "in-3")),
            read(2, 1, &transactions::output_value(2, 0, 1, "in-3")),
            read(1, 1, &transactions::output_value(4, 1, 2, "in-9")),
        ];
        let mut report = Report::default();
        check_transactions(&mut report, &ledger, &out);
        assert_eq!(report.txn_partial, 3, "{:?}", report.violations);
        assert_eq!((report.txn_eos_duplicated, report.txn_eos_missing), (1, 1));
    }
}
