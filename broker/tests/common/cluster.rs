//! Helpers of the distributed-mode tests (`cursus_testkit::TestCluster`):
//! a client per member, CLUSTER_STATUS as JSON, and waiting on it.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use cursus_testkit::eventually_async;
use cursus_wire::Compression;
use serde_json::Value;

use super::{Client, SAFETY};

/// A frame-level client of the member at client address `addr`.
pub async fn client(addr: &str) -> Client {
    Client::connect(addr.parse().unwrap(), Compression::None).await
}

/// CLUSTER_STATUS through `c`, as JSON.
pub async fn status(c: &mut Client) -> Value {
    let text = c.ok("CLUSTER_STATUS").await;
    serde_json::from_str(text.strip_prefix("OK cluster=").expect("prefix")).expect("JSON")
}

/// Waits (polling the replicated state, never a fixed sleep) until `ok`
/// holds for the CLUSTER_STATUS of `addr`; a member that does not answer
/// (killed, restarting) is asked again.
pub async fn until(addr: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    eventually_async!(SAFETY * 2, what, async {
        let connect = Client::connect(addr.parse().unwrap(), Compression::None);
        let Ok(mut c) = tokio::time::timeout(Duration::from_secs(2), connect).await else {
            return Err("no answer within 2 s".to_owned());
        };
        let s = status(&mut c).await;
        if ok(&s) {
            Ok(s)
        } else {
            Err(s.to_string())
        }
    })
}

/// True when the broker with client address `addr` is inactive (the one
/// a test killed; on a loaded machine a live one may briefly be too, so
/// counting active brokers is not enough).
pub fn inactive(s: &Value, addr: &str) -> bool {
    s["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["client_addr"] == addr && b["status"] == "inactive")
}

/// The value of `name=` in a reply line (panics when missing).
pub fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|t| t.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("{name} missing in {line}"))
}

/// Every `key=value` of a reply line.
pub fn kv(line: &str) -> HashMap<String, String> {
    line.split_whitespace()
        .filter_map(|t| t.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The brokers CLUSTER_STATUS `s` reports active.
pub fn active_brokers(s: &Value) -> usize {
    s["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["status"] == "active")
        .count()
}

/// Partition `p` of `topic` in CLUSTER_STATUS `s`.
pub fn partition<'a>(s: &'a Value, topic: &str, p: u64) -> &'a Value {
    s["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["topic"] == topic && x["partition"] == p)
        .expect("partition in CLUSTER_STATUS")
}

/// Sends `line` starting at `start` until it succeeds, following
/// NOT_LEADER and NOT_COORDINATOR redirects and retrying retryable errors (a leader not yet
/// elected or serving); returns the reply's payload.
pub async fn on_leader_frame(start: &str, line: &str) -> Bytes {
    on_leader_within(SAFETY, start, line).await
}

/// [`on_leader_frame`] for at most `timeout` (a failover may take longer
/// than one election). A redirect that leads to a member that does not
/// answer (a member with a stale view may name a paused or cut-off one)
/// starts over at `start`.
pub async fn on_leader_within(timeout: Duration, start: &str, line: &str) -> Bytes {
    let mut addr = start.to_string();
    eventually_async!(timeout, line, async {
        let connect = Client::connect(addr.parse().unwrap(), Compression::None);
        let Ok(mut c) = tokio::time::timeout(Duration::from_secs(2), connect).await else {
            let silent = std::mem::replace(&mut addr, start.to_string());
            return Err(format!("{silent}: no answer within 2 s"));
        };
        let e = match c.try_retryable(line).await {
            Ok(payload) => return Ok(payload),
            Err(e) => e,
        };
        if let Some(leader) = e.fields.get("leader").filter(|l| l.contains(':')) {
            addr = leader.clone();
        } else if let (Some(host), Some(port)) = (e.fields.get("host"), e.fields.get("port")) {
            // NOT_COORDINATOR names the coordinator this way.
            addr = format!("{host}:{port}");
        }
        Err(e.render())
    })
}

/// [`on_leader_frame`] with the reply as text.
pub async fn on_leader(start: &str, line: &str) -> String {
    String::from_utf8_lossy(&on_leader_frame(start, line).await).into_owned()
}
