//! Three Raft nodes in one process on loopback listeners with their own
//! temp dirs: leader election, proposals from a follower, failover, a
//! stopped node catching up, whole-group restarts (also after a kill -9 in
//! the middle of an append), with and without snapshots.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cursus_broker::cluster::fsm::{ClusterState, FsmCommand, FsmReply, NodeId};
use cursus_broker::cluster::raft::network::{ForwardReply, RpcRequest};
use cursus_broker::cluster::raft::{ProposeError, RaftNode, RaftNodeConfig, RaftStartError};
use cursus_broker::cluster::transport::{
    self, BoxFuture, ClusterHandler, PeerClient, PeerClientConfig, TransportError,
};
use cursus_wire::{Command, ErrorClass, ErrorPayload};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Bound on every awaited event (elections take a few hundred ms).
const WAIT: Duration = Duration::from_secs(20);
const TOKEN: &str = "cluster-secret";

struct Running {
    node: Arc<RaftNode>,
    shutdown: CancellationToken,
    server: JoinHandle<()>,
}

struct Cluster {
    dirs: BTreeMap<NodeId, tempfile::TempDir>,
    addrs: BTreeMap<NodeId, String>,
    nodes: BTreeMap<NodeId, Running>,
    snapshot_every: Option<u64>,
}

fn register(n: NodeId) -> FsmCommand {
    // From JSON: `BrokerEntry`'s newer fields have serde defaults.
    serde_json::from_value(serde_json::json!({"RegisterBroker": {"node": n, "entry": {
        "broker_id": format!("broker-{n}"),
        "cluster_addr": format!("10.0.0.{n}:7000"),
        "client_addr": format!("10.0.0.{n}:9000"),
    }}}))
    .expect("a RegisterBroker command")
}

fn config(
    id: NodeId,
    addrs: &BTreeMap<NodeId, String>,
    dir: &Path,
    snapshot_every: Option<u64>,
) -> RaftNodeConfig {
    let mut cfg = RaftNodeConfig::new(id, addrs[&id].clone(), addrs.clone(), dir);
    cfg.token = Some(TOKEN.into());
    cfg.heartbeat_ms = 50;
    cfg.election_timeout_min_ms = 300;
    cfg.election_timeout_max_ms = 600;
    if let Some(every) = snapshot_every {
        cfg.snapshot_every_logs = every;
        cfg.logs_kept_after_snapshot = 0;
    }
    cfg
}

impl Cluster {
    async fn new(snapshot_every: Option<u64>) -> Cluster {
        let mut listeners = BTreeMap::new();
        let mut addrs = BTreeMap::new();
        let mut dirs = BTreeMap::new();
        for id in 1..=3 {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            addrs.insert(id, listener.local_addr().unwrap().to_string());
            listeners.insert(id, listener);
            dirs.insert(id, tempfile::tempdir().unwrap());
        }
        let mut cluster = Cluster {
            dirs,
            addrs,
            nodes: BTreeMap::new(),
            snapshot_every,
        };
        for (id, listener) in listeners {
            cluster.start_on(id, listener).await;
        }
        cluster
    }

    fn dir(&self, id: NodeId) -> PathBuf {
        self.dirs[&id].path().to_path_buf()
    }

    async fn start_on(&mut self, id: NodeId, listener: TcpListener) {
        let cfg = config(id, &self.addrs, &self.dir(id), self.snapshot_every);
        let node = Arc::new(RaftNode::start(cfg).await.unwrap());
        let shutdown = CancellationToken::new();
        let server = node.serve_raft_only(listener, Some(TOKEN.into()), shutdown.clone());
        self.nodes.insert(
            id,
            Running {
                node,
                shutdown,
                server,
            },
        );
    }

    /// Starts a stopped node again from its directory, on its address.
    async fn restart(&mut self, id: NodeId) {
        let listener = TcpListener::bind(self.addrs[&id].as_str()).await.unwrap();
        self.start_on(id, listener).await;
    }

    /// Stops Raft and drops the listener (and its connections).
    async fn stop(&mut self, id: NodeId) {
        let running = self.nodes.remove(&id).expect("running node");
        running.node.shutdown().await;
        running.shutdown.cancel();
        running.server.await.unwrap();
    }

    fn node(&self, id: NodeId) -> &RaftNode {
        &self.nodes[&id].node
    }

    /// A leader all running nodes agree on.
    async fn leader(&self) -> NodeId {
        let first = self.nodes.values().next().unwrap();
        let leader = first.node.wait_for_leader(WAIT).await.unwrap();
        for running in self.nodes.values() {
            wait_leader(&running.node, |l| l == leader).await;
        }
        leader
    }

    fn follower(&self, leader: NodeId) -> NodeId {
        *self.nodes.keys().find(|id| **id != leader).unwrap()
    }
}

/// Waits until `node` knows a leader satisfying `pred`.
async fn wait_leader(node: &RaftNode, pred: impl Fn(NodeId) -> bool) -> NodeId {
    let mut metrics = node.metrics();
    tokio::time::timeout(WAIT, async {
        loop {
            if let Some(l) = metrics.borrow_and_update().current_leader {
                if pred(l) {
                    return l;
                }
            }
            metrics.changed().await.expect("metrics");
        }
    })
    .await
    .expect("the expected leader in time")
}

/// Waits (on the applied watch) until `node`'s state satisfies `pred`.
async fn wait_state(node: &RaftNode, pred: impl Fn(&ClusterState) -> bool) {
    let mut applied = node.applied();
    tokio::time::timeout(WAIT, async {
        loop {
            let ok = pred(&node.state().read().unwrap());
            if ok {
                return;
            }
            applied.changed().await.expect("applied watch");
        }
    })
    .await
    .expect("the expected state in time")
}

fn brokers(node: &RaftNode) -> Vec<NodeId> {
    node.state()
        .read()
        .unwrap()
        .brokers
        .keys()
        .copied()
        .collect()
}

async fn all_have(cluster: &Cluster, n: NodeId) {
    for running in cluster.nodes.values() {
        wait_state(&running.node, |s| s.brokers.contains_key(&n)).await;
    }
}

/// A kill -9 in the middle of an append: half of a record at the log's end.
fn tear_tail(dir: &Path) {
    let log = dir.join("raft").join("log");
    let data = std::fs::read(&log).unwrap();
    assert!(data.len() > 40, "the log has records");
    // The header of a 64-byte record and half of its payload.
    let payload = [b'{'; 64];
    let len = (payload.len() as u32).to_be_bytes();
    let mut torn = Vec::new();
    torn.extend_from_slice(&len);
    torn.extend_from_slice(&crc32c::crc32c(&len).to_be_bytes());
    torn.extend_from_slice(&crc32c::crc32c(&payload).to_be_bytes());
    torn.extend_from_slice(&payload[..32]);
    let mut f = OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(&torn).unwrap();
    f.sync_all().unwrap();
}

/// The last record cut in half (as a disk that acknowledged a sync it had
/// not done would leave it): the follower gets it again from the leader.
fn cut_last_record(dir: &Path) {
    let log = dir.join("raft").join("log");
    let data = std::fs::read(&log).unwrap();
    let mut pos = 0;
    let mut last = None;
    while pos + 12 <= data.len() {
        let len = u32::from_be_bytes(data[pos..pos + 4].try_into().unwrap()) as usize;
        last = Some((pos, len));
        pos += 12 + len;
    }
    let (start, len) = last.expect("the log has records");
    let f = OpenOptions::new().write(true).open(&log).unwrap();
    f.set_len((start + 12 + len / 2) as u64).unwrap();
    f.sync_all().unwrap();
}

async fn scenario(snapshot_every: Option<u64>) {
    let _ = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_test_writer()
        .try_init();
    let mut cluster = Cluster::new(snapshot_every).await;
    let leader = cluster.leader().await;
    let follower = cluster.follower(leader);

    // A proposal on a follower is forwarded and applied everywhere.
    let reply = cluster.node(follower).propose(register(10)).await.unwrap();
    assert_eq!(reply, FsmReply::Done);
    all_have(&cluster, 10).await;
    assert!(cluster.node(leader).is_leader());
    assert!(!cluster.node(follower).is_leader());

    // The leader stops: another is elected and proposals still work, from
    // both survivors.
    cluster.stop(leader).await;
    let survivors: Vec<NodeId> = cluster.nodes.keys().copied().collect();
    let new_leader = wait_leader(cluster.node(survivors[0]), |l| l != leader).await;
    assert_ne!(new_leader, leader);
    for (i, id) in survivors.iter().enumerate() {
        let n = 20 + i as NodeId;
        cluster.node(*id).propose(register(n)).await.unwrap();
    }
    // Enough entries for snapshots (when enabled) while the old leader is away.
    for n in 30..40 {
        cluster
            .node(survivors[1])
            .propose(register(n))
            .await
            .unwrap();
    }
    for n in [20, 21, 39] {
        all_have(&cluster, n).await;
    }

    // The stopped node comes back from its directory and catches up.
    cluster.restart(leader).await;
    let want = brokers(cluster.node(new_leader));
    wait_state(cluster.node(leader), |s| {
        s.brokers.keys().copied().collect::<Vec<_>>() == want
    })
    .await;
    let expected = cluster.node(new_leader).state().read().unwrap().clone();
    for running in cluster.nodes.values() {
        wait_state(&running.node, |s| *s == expected).await;
    }
    if snapshot_every.is_some() {
        let leader_dir = cluster.dir(new_leader).join("raft").join("snapshot.json");
        assert!(leader_dir.exists(), "the leader built a snapshot");
    }

    // Everyone stops (kill -9 in the middle of an append on the leader, the
    // last record cut in half on a follower) and comes back: the state
    // survives, and the group works again. (Not on the leader: a leader
    // whose own acknowledged entries vanish restarts as leader of the same
    // term and could reuse their log ids, which no Raft survives.)
    let leader = cluster.leader().await;
    let follower = cluster.follower(leader);
    for id in [1, 2, 3] {
        cluster.stop(id).await;
    }
    tear_tail(&cluster.dir(leader));
    cut_last_record(&cluster.dir(follower));
    for id in [1, 2, 3] {
        cluster.restart(id).await;
    }
    for running in cluster.nodes.values() {
        wait_state(&running.node, |s| *s == expected).await;
    }
    let leader = cluster.leader().await;
    let follower = cluster.follower(leader);
    cluster.node(follower).propose(register(50)).await.unwrap();
    all_have(&cluster, 50).await;

    for id in [1, 2, 3] {
        cluster.stop(id).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_elect_fail_over_catch_up_and_restart() {
    scenario(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_with_snapshots_and_purged_logs() {
    scenario(Some(5)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proposal_without_a_quorum_fails_with_no_leader() {
    let mut cluster = Cluster::new(None).await;
    let leader = cluster.leader().await;
    let follower = cluster.follower(leader);
    cluster.node(follower).propose(register(1)).await.unwrap();
    let others: Vec<NodeId> = cluster
        .nodes
        .keys()
        .copied()
        .filter(|id| *id != follower)
        .collect();
    for id in others {
        cluster.stop(id).await;
    }
    // Alone, the follower never learns of a new leader.
    let node = cluster.node(follower);
    match node.propose(register(2)).await {
        Err(ProposeError::NoLeader(_)) => {}
        other => panic!("expected NoLeader, got {other:?}"),
    }
    cluster.stop(follower).await;
}

#[tokio::test]
async fn start_refuses_a_foreign_marker_and_a_node_not_in_peers() {
    let dir = tempfile::tempdir().unwrap();
    let addrs = BTreeMap::from([(1, "127.0.0.1:1".to_string())]);
    std::fs::create_dir_all(dir.path().join("raft")).unwrap();
    std::fs::write(dir.path().join("raft").join(".cursus-raft-format"), "7\n").unwrap();
    let err = RaftNode::start(config(1, &addrs, dir.path(), None))
        .await
        .unwrap_err();
    assert!(matches!(err, RaftStartError::Store(_)), "{err:?}");
    assert!(err.to_string().contains("unsupported recovery protocol"));

    let mut cfg = config(1, &addrs, dir.path(), None);
    cfg.node_id = 9;
    assert!(matches!(
        RaftNode::start(cfg).await,
        Err(RaftStartError::NotAPeer(9))
    ));
}

/// Answers `REPLICATE_MESSAGE` by echoing, as the broker's own handler would.
struct Echo;

impl ClusterHandler for Echo {
    fn handle(&self, command: Command, body: Bytes) -> BoxFuture<'_, Result<Bytes, ErrorPayload>> {
        Box::pin(async move {
            match command {
                Command::ReplicateMessage => Ok(body),
                _ => Err(ErrorPayload::new("unknown_command")),
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_listener_serves_raft_and_the_brokers_commands() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let addrs = BTreeMap::from([(1, addr.clone())]);
    let node = Arc::new(
        RaftNode::start(config(1, &addrs, dir.path(), None))
            .await
            .unwrap(),
    );
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(transport::serve(
        listener,
        Some(TOKEN.into()),
        node.cluster_handler(Some(Arc::new(Echo))),
        shutdown.clone(),
    ));

    // A group of one elects itself and applies at once.
    assert_eq!(node.wait_for_leader(WAIT).await.unwrap(), 1);
    assert!(node.is_leader());
    node.propose(register(7)).await.unwrap();
    assert_eq!(brokers(&node), vec![7]);
    assert!(*node.applied().borrow() > 0);

    let client = PeerClient::new(
        addr.clone(),
        PeerClientConfig {
            token: Some(TOKEN.into()),
            ..PeerClientConfig::default()
        },
    );
    // Other commands reach the broker's handler, with an opaque body.
    let body = Bytes::from_static(b"\x00\x00\x00\x02{}raw bytes");
    assert_eq!(
        client
            .request(Command::ReplicateMessage, body.clone())
            .await
            .unwrap(),
        body
    );
    // A RAFT_APPLY body that is not an envelope is a typed error.
    match client
        .request(
            Command::RaftApply,
            Bytes::from_static(b"{\"rpc\":\"nope\"}"),
        )
        .await
    {
        Err(TransportError::Remote { error, .. }) => assert_eq!(error.code, "unmarshal_failed"),
        other => panic!("{other:?}"),
    }
    // A forwarded proposal is written by the leader.
    let forward = serde_json::to_vec(&RpcRequest::Forward(register(8))).unwrap();
    let reply = client
        .request(Command::RaftApply, Bytes::from(forward))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<ForwardReply>(&reply).unwrap(),
        ForwardReply::Applied(FsmReply::Done)
    );
    assert_eq!(brokers(&node), vec![7, 8]);
    // Without the token, nothing is served.
    let intruder = PeerClient::new(addr, PeerClientConfig::default());
    match intruder
        .request(Command::ReplicateMessage, Bytes::new())
        .await
    {
        Err(TransportError::Remote { error, .. }) => {
            assert_eq!(error.code, transport::UNAUTHORIZED);
            assert_eq!(error.class, ErrorClass::Authorization);
        }
        other => panic!("{other:?}"),
    }

    node.shutdown().await;
    shutdown.cancel();
    server.await.unwrap();
    assert!(matches!(
        node.propose(register(9)).await,
        Err(ProposeError::Shutdown(_) | ProposeError::NoLeader(_))
    ));
}

/// A leader that stops cleanly hands its leadership to a caught-up voter
/// (`RaftNode::hand_over`) even though every voter, itself included,
/// still holds a lease on it: the others then agree on the successor and
/// proposals made on the former leader are forwarded to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_hands_its_leadership_over_to_a_caught_up_voter() {
    let mut cluster = Cluster::new(None).await;
    let leader = cluster.leader().await;
    let follower = cluster.follower(leader);
    cluster.node(leader).propose(register(1)).await.unwrap();
    assert_eq!(
        cluster
            .node(follower)
            .hand_over(&[leader], WAIT)
            .await
            .unwrap_err(),
        "not the raft leader"
    );
    let candidates: Vec<NodeId> = cluster.nodes.keys().copied().collect();
    let successor = cluster
        .node(leader)
        .hand_over(&candidates, WAIT)
        .await
        .expect("a successor");
    assert_ne!(successor, leader);
    for running in cluster.nodes.values() {
        wait_leader(&running.node, |l| l == successor).await;
    }
    cluster.node(leader).propose(register(2)).await.unwrap();
    wait_state(cluster.node(successor), |s| s.brokers.contains_key(&2)).await;
    for id in [1, 2, 3] {
        cluster.stop(id).await;
    }
}
