//! Helpers of the tests of the synchronous API.
#![allow(dead_code)] // each test binary uses some of them

use cursus::blocking::{Admin, Consumer};
use cursus::NewTopic;
use cursus::{ClientConfig, ConsumerConfig};
use cursus_testkit::{poll_until, TestBroker};
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(20);

pub fn topic(broker: &TestBroker, name: &str, partitions: u32) {
    let admin = Admin::connect(ClientConfig::new(&broker.addr)).unwrap();
    admin
        .create_topic(&NewTopic::new(name).partitions(partitions))
        .unwrap();
    admin.close().unwrap();
}

pub fn consumer(broker: &TestBroker, group: &str, extra: &[(&str, &str)]) -> Consumer {
    let mut config = ConsumerConfig::new(&broker.addr, group);
    config.set("fetch_max_wait_ms", "50").unwrap();
    for (k, v) in extra {
        config.set(k, v).unwrap();
    }
    Consumer::connect(config).unwrap()
}

/// Polls until `n` records arrived (or a generous deadline passed: the
/// caller checks what arrived).
pub fn take(consumer: &Consumer, n: usize, max: usize) -> Vec<u64> {
    let mut offsets = Vec::new();
    let _ = poll_until(Duration::from_secs(20), || {
        let want = (n - offsets.len()).min(max);
        if want > 0 {
            let got = consumer
                .poll_max(Some(Duration::from_millis(100)), want)
                .unwrap();
            offsets.extend(got.iter().map(|r| r.offset));
        }
        offsets.len() >= n
    });
    offsets
}

/// Creates a topic through the async admin (for the async engine tests).
pub async fn create_topic(broker: &TestBroker, topic: &str, partitions: u32) {
    let admin = cursus::admin::Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    admin
        .create_topic(&NewTopic::new(topic).partitions(partitions))
        .await
        .unwrap();
    admin.close().await;
}

/// An async consumer of group `g-{topic}` subscribed to `topic`, reading
/// it from the start.
pub async fn subscribed(broker: &TestBroker, topic: &str) -> cursus::consumer::Consumer {
    let mut config = ConsumerConfig::new(&broker.addr, format!("g-{topic}"));
    config.set("auto_offset_reset", "earliest").unwrap();
    config.set("fetch_max_wait_ms", "100").unwrap();
    let consumer = cursus::consumer::Consumer::connect(config).await.unwrap();
    consumer
        .subscribe(cursus::consumer::Subscription::Topics(vec![topic.into()]))
        .await
        .unwrap();
    consumer
}
