//! Cost of one blocking send: the Rust engine directly vs the C ABI.
//!
//! usage: bench_send BROKER_ADDR [N]. Prints one line per path (ns per send).
//! The C (`bench_send.c`) and Go (`BenchmarkSend`) numbers come from
//! `make bench-ffi`, against the same broker, same options and record size.

use cursus::blocking::{Admin, Producer};
use cursus::producer::ProducerRecord;
use cursus::NewTopic;
use cursus::{ClientConfig, ProducerConfig};
use cursus_ffi::*;
use std::ffi::CString;
use std::time::Instant;

fn main() {
    let broker = std::env::args()
        .nth(1)
        .expect("usage: bench_send BROKER_ADDR [N]");
    let n: u32 = std::env::args()
        .nth(2)
        .map(|s| s.parse().expect("N"))
        .unwrap_or(2000);
    let topic = format!("bench-rust-{}", std::process::id());
    let admin = Admin::connect(ClientConfig::new(broker.clone())).expect("admin");
    admin
        .create_topic(&NewTopic::new(topic.clone()).partitions(1))
        .expect("create topic");
    let payload = vec![0u8; 100];

    // The engine, directly.
    let mut cfg = ProducerConfig::new(broker.clone());
    cfg.set("linger_ms", "0").expect("linger");
    cfg.set("acks", "1").expect("acks");
    let p = Producer::connect(cfg).expect("producer");
    let start = Instant::now();
    for _ in 0..n {
        p.send_and_wait(ProducerRecord::new(topic.clone(), payload.clone()).partition(0))
            .expect("send");
    }
    let rust_ns = start.elapsed().as_nanos() / n as u128;
    // Queueing only (no wait): the per-call cost without the broker round trip.
    let q = n * 10;
    let start = Instant::now();
    for _ in 0..q {
        drop(
            p.send(ProducerRecord::new(topic.clone(), payload.clone()).partition(0))
                .expect("queue"),
        );
    }
    let rust_queue_ns = start.elapsed().as_nanos() / q as u128;
    p.flush(None).expect("flush");
    p.close(Some(std::time::Duration::from_secs(10)))
        .expect("close");

    // The C ABI (the exported functions, called through their C signatures).
    // SAFETY: every pointer passed below is valid for the call: handles come
    // from the library, strings are live CStrings, the payload is a live Vec,
    // and NULL is passed only where the header allows it.
    let (ffi_ns, ffi_queue_ns) = unsafe {
        let mut c = std::ptr::null_mut();
        assert_eq!(
            cursus_config_new(&mut c, std::ptr::null_mut()),
            cursus_status_t::CURSUS_OK
        );
        let set = |k: &str, v: &str| {
            let (k, v) = (CString::new(k).unwrap(), CString::new(v).unwrap());
            assert_eq!(
                cursus_config_set(c, k.as_ptr(), v.as_ptr(), std::ptr::null_mut()),
                cursus_status_t::CURSUS_OK
            );
        };
        set("bootstrap_servers", &broker);
        set("linger_ms", "0");
        set("acks", "1");
        let mut producer = std::ptr::null_mut();
        assert_eq!(
            cursus_producer_new(c, &mut producer, std::ptr::null_mut()),
            cursus_status_t::CURSUS_OK
        );
        let t = CString::new(topic).unwrap();
        let start = Instant::now();
        for _ in 0..n {
            let s = cursus_producer_send(
                producer,
                t.as_ptr(),
                0,
                std::ptr::null(),
                0,
                payload.as_ptr(),
                payload.len(),
                CURSUS_NO_TIMESTAMP,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            assert_eq!(s, cursus_status_t::CURSUS_OK);
        }
        let ffi_ns = start.elapsed().as_nanos() / n as u128;
        let start = Instant::now();
        for _ in 0..q {
            let s = cursus_producer_send_cb(
                producer,
                t.as_ptr(),
                0,
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
        let ffi_queue_ns = start.elapsed().as_nanos() / q as u128;
        cursus_producer_flush(producer, -1, std::ptr::null_mut());
        cursus_producer_close(producer, 10_000, std::ptr::null_mut());
        cursus_producer_destroy(producer);
        cursus_config_destroy(c);
        (ffi_ns, ffi_queue_ns)
    };
    println!("rust engine send_and_wait: {rust_ns} ns/send ({n} sends)");
    println!("C ABI cursus_producer_send (from Rust): {ffi_ns} ns/send ({n} sends)");
    println!("rust engine send (queue only): {rust_queue_ns} ns/record ({q} records)");
    println!("C ABI cursus_producer_send_cb (queue only, from Rust): {ffi_queue_ns} ns/record ({q} records)");
}
