//! Starts a real cluster of `cursus-broker` processes for tests: each
//! broker on free loopback ports (client, health and cluster listeners),
//! with its own data directory under one temporary root, cleaned up when
//! the handle drops.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::links::Links;
use crate::signal::{self, Signal};
use crate::{broker_binary, PORT_FREE_TIMEOUT};

/// The internal token every member is started with.
pub const TOKEN: &str = "test-cluster-token";

/// Starts of a whole cluster tried before giving up.
const START_ATTEMPTS: usize = 3;

/// How long a member may take to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// One broker of a [`TestCluster`].
pub struct ClusterMember {
    /// Behind a mutex so that [`TestCluster::wait_ready`] can notice an
    /// exit through `&self`.
    child: std::sync::Mutex<Option<Child>>,
    /// Raft node id (1-based).
    pub node_id: u64,
    /// Client address, `127.0.0.1:PORT`.
    pub addr: String,
    /// Health endpoint address.
    pub health_addr: String,
    /// Cluster listener address.
    pub cluster_addr: String,
    /// Data directory.
    pub data_dir: PathBuf,
    /// Started with `--no-replicas` (leads nothing).
    pub no_replicas: bool,
    /// TLS listener address, when the configuration has `tls_listen`
    /// (from the broker's banner: a `:0` port is picked at each start).
    pub tls_addr: Option<String>,
    /// Added at run time ([`TestCluster::start_joiner`]): started with
    /// `--cluster-join` instead of `--cluster-peers`, plus these flags.
    pub joiner: Option<Vec<String>>,
}

/// A running cluster. Every member is killed (and the data removed) on drop.
pub struct TestCluster {
    root: tempfile::TempDir,
    peers: String,
    extra_config: Option<String>,
    /// The proxies every member dials the others through
    /// ([`start_linked`](Self::start_linked)).
    links: Option<Links>,
    /// The members, index `i` is node `i + 1` (members added with
    /// [`start_joiner`](Self::start_joiner) come last, with their own ids).
    pub members: Vec<ClusterMember>,
}

/// A free port below the kernel's ephemeral range (32768 and up on
/// Linux): a port taken from that range and released could be reused for
/// an outgoing connection before the broker binds it, which on a busy test
/// machine happens.
fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    // Never hand the same port out twice in one test process: parallel
    // tests' clusters would otherwise race for a port both saw free.
    static GIVEN: std::sync::Mutex<BTreeSet<u16>> = std::sync::Mutex::new(BTreeSet::new());
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..1000 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        h.write_u32(std::process::id());
        let port = 20_000 + (h.finish() % 12_000) as u16;
        if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free port found in 20000-31999");
}

impl TestCluster {
    /// Starts `n` brokers and waits until every one is ready (a Raft
    /// leader is known and the broker is registered and active).
    pub fn start(n: usize) -> TestCluster {
        Self::start_with_config(n, "")
    }

    /// [`start`](Self::start) with extra TOML configuration for every broker.
    pub fn start_with_config(n: usize, toml: &str) -> TestCluster {
        Self::start_members(n, 0, toml)
    }

    /// `n` brokers holding replicas plus `gateways` brokers started with
    /// `--no-replicas` (they lead nothing: clients bootstrapped from one
    /// are redirected for every partition), the latter last in
    /// [`members`](Self::members).
    pub fn start_members(n: usize, gateways: usize, toml: &str) -> TestCluster {
        Self::start_cluster(n, gateways, toml, false)
    }

    /// [`start_with_config`](Self::start_with_config) with every member
    /// dialing the others through a [`Links`] proxy (its
    /// `--cluster-dial-overrides`), so that the test can cut the network
    /// between members ([`links`](Self::links)) while clients still reach
    /// every one of them.
    pub fn start_linked(n: usize, toml: &str) -> TestCluster {
        Self::start_cluster(n, 0, toml, true)
    }

    fn start_cluster(n: usize, gateways: usize, toml: &str, linked: bool) -> TestCluster {
        // Another process may take a port between our check and the
        // broker's bind: such a start is retried on fresh ports.
        for attempt in 1..=START_ATTEMPTS {
            let cluster = Self::spawn_members(n, gateways, toml, linked);
            match (0..n + gateways).try_for_each(|i| cluster.ready_or_exit(i)) {
                Ok(()) => return cluster,
                Err(e) if attempt < START_ATTEMPTS => {
                    eprintln!("TestCluster: {e}; starting again on other ports");
                }
                Err(e) => panic!("TestCluster: {e}"),
            }
        }
        unreachable!("the last attempt panics")
    }

    fn spawn_members(n: usize, gateways: usize, toml: &str, linked: bool) -> TestCluster {
        let root = tempfile::tempdir().expect("temp dir");
        let mut members = Vec::new();
        for i in 0..n + gateways {
            let node_id = i as u64 + 1;
            members.push(ClusterMember {
                child: std::sync::Mutex::new(None),
                node_id,
                addr: format!("127.0.0.1:{}", free_port()),
                health_addr: format!("127.0.0.1:{}", free_port()),
                cluster_addr: format!("127.0.0.1:{}", free_port()),
                data_dir: root.path().join(format!("node-{node_id}")),
                no_replicas: i >= n,
                tls_addr: None,
                joiner: None,
            });
        }
        let peers = members
            .iter()
            .map(|m| format!("{}={}", m.node_id, m.cluster_addr))
            .collect::<Vec<_>>()
            .join(",");
        let links = linked.then(|| {
            let addrs: Vec<String> = members.iter().map(|m| m.cluster_addr.clone()).collect();
            Links::start(&addrs).expect("start the link proxies")
        });
        let mut cluster = TestCluster {
            root,
            peers,
            extra_config: (!toml.is_empty()).then(|| toml.to_owned()),
            links,
            members,
        };
        for i in 0..n + gateways {
            cluster.spawn(i);
        }
        cluster
    }

    /// Adds a broker at run time: node id `node_id` (not among the
    /// static peers), fresh ports, started with `--cluster-join` naming
    /// the static members' cluster addresses plus `flags` (e.g.
    /// `--cluster-learner`, `--decommission`) and the cluster's extra TOML.
    /// Waits until it is ready (registered, active, caught up) and returns
    /// its index in [`members`](Self::members).
    pub fn start_joiner(&mut self, node_id: u64, flags: &[&str]) -> usize {
        let i = self.spawn_joiner(node_id, flags);
        self.wait_ready(i);
        i
    }

    /// [`start_joiner`](Self::start_joiner) without waiting for readiness
    /// (for a join the cluster refuses). Its data directory is
    /// `joined-<index>`, never a static member's.
    pub fn spawn_joiner(&mut self, node_id: u64, flags: &[&str]) -> usize {
        let i = self.members.len();
        let member = ClusterMember {
            child: std::sync::Mutex::new(None),
            node_id,
            addr: format!("127.0.0.1:{}", free_port()),
            health_addr: format!("127.0.0.1:{}", free_port()),
            cluster_addr: format!("127.0.0.1:{}", free_port()),
            data_dir: self.root.path().join(format!("joined-{i}")),
            no_replicas: false,
            tls_addr: None,
            joiner: Some(flags.iter().map(|f| f.to_string()).collect()),
        };
        self.members.push(member);
        self.spawn(i);
        i
    }

    /// Waits up to `timeout` for member `i` to exit on its own and returns
    /// its exit status (`None`: still running).
    pub fn wait_exit(&self, i: usize, timeout: Duration) -> Option<std::process::ExitStatus> {
        crate::poll_until(timeout, || self.exit_status(i)).ok()
    }

    /// Member `i`'s exit status, once it has exited.
    fn exit_status(&self, i: usize) -> Option<std::process::ExitStatus> {
        self.members[i]
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// The static members' cluster addresses, comma-separated (the
    /// `--cluster-join` seeds).
    pub fn seeds(&self) -> String {
        self.members
            .iter()
            .filter(|m| m.joiner.is_none())
            .map(|m| m.cluster_addr.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every member's client address, comma-separated (a bootstrap list).
    pub fn bootstrap(&self) -> String {
        self.members
            .iter()
            .map(|m| m.addr.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    fn spawn(&mut self, i: usize) {
        let m = &self.members[i];
        let mut cmd = Command::new(broker_binary());
        cmd.arg("--listen")
            .arg(&m.addr)
            .arg("--health-listen")
            .arg(&m.health_addr)
            .arg("--data-dir")
            .arg(&m.data_dir)
            .arg("--node-id")
            .arg(m.node_id.to_string())
            .arg("--internal-auth-token")
            .arg(TOKEN);
        match &m.joiner {
            None => cmd.arg("--cluster-peers").arg(&self.peers),
            Some(flags) => cmd
                .arg("--cluster-listen")
                .arg(&m.cluster_addr)
                .arg("--cluster-join")
                .arg(self.seeds())
                .args(flags),
        };
        if m.no_replicas {
            cmd.arg("--no-replicas");
        }
        if let Some(links) = self.links.as_ref().filter(|l| i < l.len()) {
            cmd.arg("--cluster-dial-overrides")
                .arg(links.dial_overrides(i));
        }
        if let Some(toml) = &self.extra_config {
            let path = self.root.path().join(format!("broker-{}.toml", m.node_id));
            let mut f = std::fs::File::create(&path).expect("config file");
            f.write_all(toml.as_bytes()).expect("write config");
            cmd.arg("--config").arg(path);
        }
        let log = std::env::var("CURSUS_TEST_CLUSTER_LOG").ok();
        cmd.stdout(Stdio::piped())
            .env("RUST_LOG", log.as_deref().unwrap_or("warn"));
        if log.is_none() {
            cmd.stderr(Stdio::null());
        }
        let mut child = cmd.spawn().expect("start cursus-broker");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read broker banner");
        // No banner: the broker exited (e.g. a port was taken meanwhile);
        // the readiness wait reports it.
        self.members[i].tls_addr = line
            .split_whitespace()
            .find_map(|t| t.strip_prefix("tls_addr="))
            .map(str::to_owned);
        *self.members[i]
            .child
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = Some(child);
    }

    /// Waits until member `i` answers `/ready` with 200.
    pub fn wait_ready(&self, i: usize) {
        if let Err(e) = self.ready_or_exit(i) {
            panic!("{e}");
        }
    }

    /// [`wait_ready`](Self::wait_ready), or why not: the member exited or
    /// the wait timed out.
    fn ready_or_exit(&self, i: usize) -> Result<(), String> {
        let m = &self.members[i];
        let ready_or_exited = || match http_status(&m.health_addr, "/ready") {
            Some(200) => Some(Ok(())),
            _ => self.exit_status(i).map(|status| {
                Err(format!(
                    "cluster member {} exited ({status}) before it was ready",
                    m.node_id
                ))
            }),
        };
        crate::poll_until(READY_TIMEOUT, ready_or_exited).unwrap_or_else(|_| {
            Err(format!(
                "cluster member {} not ready within {READY_TIMEOUT:?}",
                m.node_id
            ))
        })
    }

    /// Kills member `i` with SIGKILL (no clean shutdown).
    pub fn kill(&mut self, i: usize) {
        let child = self.members[i]
            .child
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(mut c) = child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops member `i` cleanly (SIGTERM, then waits for it to exit);
    /// how it exited (`None`: it was not running).
    pub fn stop(&mut self, i: usize) -> Option<std::process::ExitStatus> {
        let child = self.members[i]
            .child
            .get_mut()
            .unwrap_or_else(|e| e.into_inner());
        let mut c = child.take()?;
        let _ = signal::send(c.id(), Signal::Term);
        c.wait().ok()
    }

    /// Member `i`'s process id while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.members[i]
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(Child::id)
    }

    /// Freezes member `i` (SIGSTOP): it answers nothing, its connections
    /// stay open, and it does not know time passes.
    pub fn pause(&self, i: usize) {
        let pid = self.pid(i).expect("member runs");
        signal::send(pid, Signal::Stop).expect("SIGSTOP");
    }

    /// Wakes member `i` after [`pause`](Self::pause) (SIGCONT).
    pub fn resume(&self, i: usize) {
        let pid = self.pid(i).expect("member runs");
        signal::send(pid, Signal::Cont).expect("SIGCONT");
    }

    /// The proxies between the members of a cluster started with
    /// [`start_linked`](Self::start_linked) (panics otherwise).
    pub fn links(&self) -> &Links {
        self.links
            .as_ref()
            .expect("a cluster started with TestCluster::start_linked")
    }

    /// True while member `i` runs.
    pub fn is_running(&self, i: usize) -> bool {
        self.members[i]
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Starts member `i` again on its ports and data directory (after
    /// [`kill`](Self::kill)) without waiting for readiness.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        for port_owner in [&self.members[i].addr, &self.members[i].cluster_addr] {
            let free = || TcpListener::bind(port_owner).map(drop);
            crate::eventually(
                PORT_FREE_TIMEOUT,
                &format!("port {port_owner} to come free"),
                free,
            );
        }
        self.spawn(i);
    }

    /// The member index whose client address is `addr`.
    pub fn index_of(&self, addr: &str) -> Option<usize> {
        self.members.iter().position(|m| m.addr == addr)
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}

/// The status code of `GET path` on `addr`, `None` when not reachable.
fn http_status(addr: &str, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    reply.split_whitespace().nth(1)?.parse().ok()
}
