//! The engine's reference figures for the binding benchmarks, and the C ABI
//! measured from Rust in the same process.
//!
//! ```text
//! bench_send engine BROKER_ADDR N OUT.json   the engine alone (produce, consume)
//! bench_send ffi BROKER_ADDR N OUT.json      the engine, then the C ABI (per record,
//!                                            batch, consume, idle RSS), with ratios
//! ```
//!
//! Every harness (`make bench-ffi`, `bench-python`, `bench-java`) runs the
//! `engine` mode against its broker just before its own figures, and
//! divides by them: same machine, same broker, same workload (N records of
//! 100 B to 4 partitions, the partitioner choosing, acks=1, batch_size
//! 256 KiB; consumed by one group member polling up to 10,000 at a time).

use cursus::admin::{Admin, NewTopic};
use cursus::blocking::block_on_engine;
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_ffi::*;
use std::ffi::CString;
use std::time::{Duration, Instant};

// The engine's reference loops, as core/benches/engine.rs times them.
#[path = "../../core/benches/support/workload.rs"]
mod workload;

const PAYLOAD: usize = 100;
const PARTITIONS: u32 = 4;
const BATCH: usize = 1000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: bench_send engine|ffi BROKER_ADDR N OUT.json");
        std::process::exit(2);
    }
    let (mode, broker, out) = (&args[1], &args[2], &args[4]);
    let n: usize = args[3].parse().expect("N");
    let (produce, consume) = engine(broker, n);
    let mut fields = vec![
        format!("\"engine_produce_records_per_s\": {produce:.0}"),
        format!("\"engine_consume_records_per_s\": {consume:.0}"),
    ];
    println!("engine produce: {produce:.0} records/s, consume: {consume:.0} records/s ({n} x {PAYLOAD} B)");
    if mode == "ffi" {
        let c = c_abi(broker, n);
        println!(
            "C ABI (from Rust): batch {:.0} records/s ({:.2} of the engine), per record {:.0} records/s \
             ({:.2}), {:.2} us per send call; consume {:.0} records/s ({:.2})",
            c.batch,
            c.batch / produce,
            c.per_record,
            c.per_record / produce,
            c.call_us,
            c.consume,
            c.consume / consume,
        );
        fields.extend([
            format!("\"produce_batch_records_per_s\": {:.0}", c.batch),
            format!("\"produce_per_record_records_per_s\": {:.0}", c.per_record),
            format!("\"send_call_us\": {:.3}", c.call_us),
            format!("\"consume_records_per_s\": {:.0}", c.consume),
            format!("\"ratio_produce_batch\": {:.3}", c.batch / produce),
            format!(
                "\"ratio_produce_per_record\": {:.3}",
                c.per_record / produce
            ),
            format!("\"ratio_consume\": {:.3}", c.consume / consume),
        ]);
    }
    let json = format!(
        "{{\"binding\": \"{}\", \"command\": \"{}\", \"records\": {n}, \"payload_bytes\": {PAYLOAD}, \
         \"partitions\": {PARTITIONS}, \"batch_records\": {BATCH}, {}}}\n",
        if mode == "ffi" { "c-abi-from-rust" } else { "engine" },
        args.join(" "),
        fields.join(", ")
    );
    if let Some(dir) = std::path::Path::new(out).parent() {
        std::fs::create_dir_all(dir).ok();
    }
    std::fs::write(out, json).expect("write the result");
}

/// A fresh 4-partition topic.
fn topic(broker: &str, what: &str) -> String {
    let name = format!("bench-{what}-{}", std::process::id());
    block_on_engine(async {
        let admin = Admin::connect(ClientConfig::new(broker)).await?;
        admin
            .create_topic(&NewTopic::new(&name).partitions(PARTITIONS))
            .await?;
        admin.close().await;
        Ok::<(), cursus::Error>(())
    })
    .expect("runtime")
    .expect("create topic");
    name
}

/// The engine's produce and consume rates (the async API, as
/// `core/benches/engine.rs` drives it).
fn engine(broker: &str, n: usize) -> (f64, f64) {
    let topic = topic(broker, "engine");
    block_on_engine(async {
        let mut config = ProducerConfig::new(broker);
        config.set("acks", "1")?;
        config.set("batch_size", "262144")?;
        let producer = Producer::connect(config).await?;
        // Cloning the record clones its topic and shares its payload, as
        // `core/benches/engine.rs` does.
        let record = ProducerRecord::new(&topic, vec![b'x'; PAYLOAD]);
        let produce = workload::produce_all(&producer, n, |_| record.clone()).await?;
        producer.close(Duration::from_secs(10)).await?;

        let mut config = ConsumerConfig::new(broker, format!("{topic}-group"));
        config.set("max_poll_records", "10000")?;
        config.set("fetch_max_records", "8192")?;
        let consumer = Consumer::connect(config).await?;
        consumer
            .subscribe(Subscription::Topics(vec![topic.clone()]))
            .await?;
        let consume = workload::consume_all(&consumer, n).await?;
        consumer.close().await?;
        Ok::<_, cursus::Error>((produce, consume))
    })
    .expect("runtime")
    .expect("engine bench")
}

struct CFigures {
    batch: f64,
    per_record: f64,
    call_us: f64,
    consume: f64,
}

/// The packed batch layout of `bridge/src/records_in.rs`: `count` keyless
/// records of the batch's topic, the partitioner choosing.
fn pack(count: usize, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + count * (24 + payload.len()));
    out.extend_from_slice(&(count as u32).to_le_bytes());
    for _ in 0..count {
        out.extend_from_slice(&(-1i32).to_le_bytes()); // the batch's topic
        out.extend_from_slice(&(-1i32).to_le_bytes());
        out.extend_from_slice(&CURSUS_NO_TIMESTAMP.to_le_bytes());
        out.extend_from_slice(&(-1i32).to_le_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(payload);
    }
    out
}

/// The C ABI, called through its C signatures from Rust.
fn c_abi(broker: &str, n: usize) -> CFigures {
    let payload = vec![b'x'; PAYLOAD];
    // SAFETY: every pointer passed below is valid for its call: handles come
    // from the library, strings are live CStrings, buffers are live Vecs,
    // and NULL is passed only where the header allows it.
    unsafe {
        let config = |pairs: &[(&str, &str)]| {
            let mut c = std::ptr::null_mut();
            assert_eq!(
                cursus_config_new(&mut c, std::ptr::null_mut()),
                cursus_status_t::CURSUS_OK
            );
            for (k, v) in pairs {
                let (k, v) = (CString::new(*k).unwrap(), CString::new(*v).unwrap());
                assert_eq!(
                    cursus_config_set(c, k.as_ptr(), v.as_ptr(), std::ptr::null_mut()),
                    cursus_status_t::CURSUS_OK
                );
            }
            c
        };
        let pc = config(&[
            ("bootstrap_servers", broker),
            ("acks", "1"),
            ("batch_size", "262144"),
        ]);
        let mut producer = std::ptr::null_mut();
        assert_eq!(
            cursus_producer_new(pc, &mut producer, std::ptr::null_mut()),
            cursus_status_t::CURSUS_OK
        );

        // Per record: one crossing each, no callback.
        let t = CString::new(topic(broker, "c-record")).unwrap();
        let started = Instant::now();
        for _ in 0..n {
            let s = cursus_producer_send_cb(
                producer,
                t.as_ptr(),
                -1,
                std::ptr::null(),
                0,
                payload.as_ptr(),
                payload.len(),
                CURSUS_NO_TIMESTAMP,
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_eq!(s, cursus_status_t::CURSUS_OK);
        }
        let call_us = started.elapsed().as_secs_f64() * 1e6 / n as f64;
        cursus_producer_flush(producer, CURSUS_NO_TIMEOUT, std::ptr::null_mut());
        let per_record = n as f64 / started.elapsed().as_secs_f64();

        // Batches: one crossing and one callback per BATCH records.
        let t = CString::new(topic(broker, "c-batch")).unwrap();
        let started = Instant::now();
        let mut sent = 0;
        while sent < n {
            let count = BATCH.min(n - sent);
            let packed = pack(count, &payload);
            let s = cursus_producer_send_batch(
                producer,
                t.as_ptr(),
                packed.as_ptr(),
                packed.len(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_eq!(s, cursus_status_t::CURSUS_OK);
            sent += count;
        }
        cursus_producer_flush(producer, CURSUS_NO_TIMEOUT, std::ptr::null_mut());
        let batch = n as f64 / started.elapsed().as_secs_f64();

        // Consume the batch topic: one crossing per poll (the packed view).
        let group = format!("bench-c-group-{}", std::process::id());
        let cc = config(&[
            ("bootstrap_servers", broker),
            ("group_id", &group),
            ("max_poll_records", "10000"),
            ("fetch_max_records", "8192"),
        ]);
        let mut consumer = std::ptr::null_mut();
        assert_eq!(
            cursus_consumer_new(cc, &mut consumer, std::ptr::null_mut()),
            cursus_status_t::CURSUS_OK
        );
        let topics = [t.as_ptr()];
        assert_eq!(
            cursus_consumer_subscribe(consumer, topics.as_ptr(), 1, std::ptr::null_mut()),
            cursus_status_t::CURSUS_OK
        );
        let started = Instant::now();
        let mut seen = 0usize;
        while seen < n {
            let mut buf = std::ptr::null_mut();
            let mut len = 0usize;
            let s = cursus_consumer_poll_batch(
                consumer,
                5000,
                10_000,
                &mut buf,
                &mut len,
                std::ptr::null_mut(),
            );
            assert_eq!(s, cursus_status_t::CURSUS_OK);
            if len >= 4 {
                let b = std::slice::from_raw_parts(buf, len);
                seen += u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
            }
            cursus_buffer_free(buf, len);
        }
        let consume = n as f64 / started.elapsed().as_secs_f64();
        cursus_consumer_close(consumer, std::ptr::null_mut());
        cursus_consumer_destroy(consumer);
        cursus_producer_close(producer, 10_000, std::ptr::null_mut());
        cursus_producer_destroy(producer);
        cursus_config_destroy(pc);
        cursus_config_destroy(cc);
        CFigures {
            batch,
            per_record,
            call_us,
            consume,
        }
    }
}
