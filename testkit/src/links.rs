//! Network faults between cluster members on loopback: a TCP proxy for
//! every ordered pair of members `(from, to)`, through which `from` dials
//! `to`'s cluster listener (the broker's `--cluster-dial-overrides`, from
//! [`Links::dial_overrides`]). Every broker-to-broker connection (Raft,
//! replication, participant appends, TXN_SYNC, membership, heartbeats)
//! then crosses one of these proxies, and the test cuts them.
//!
//! A fault is set per direction between two members: "what `from` sends
//! to `to` is lost". A connection dialed by `a` to `b` carries `a`'s
//! requests (direction a→b) and `b`'s answers (b→a), so the proxy `(a, b)`
//! holds its forward bytes when a→b is cut and its backward bytes when
//! b→a is. Two kinds of loss:
//!
//! - [`Fault::Blackhole`] (what a real partition looks like to TCP): the
//!   connections stay open and the bytes are held, not read on; a new
//!   connection is accepted and held the same way. When the link heals the
//!   held bytes are delivered, late, as TCP's retransmissions would.
//! - [`Fault::Drop`] (a peer that answers with resets): every connection of
//!   the link is closed and new ones are closed as soon as they arrive.
//!
//! The proxies run on their own tokio runtime, so synchronous tests and
//! async callers use them alike; they stop when [`Links`] drops.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// How what one member sends to another is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Connections stay open and nothing is delivered until the link heals.
    Blackhole,
    /// Connections are closed, new ones refused.
    Drop,
}

impl Fault {
    /// `blackhole` or `drop`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Blackhole => "blackhole",
            Fault::Drop => "drop",
        }
    }
}

/// What the proxy of one link `(from, to)` does now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LinkState {
    /// Connections are closed and refused.
    refuse: bool,
    /// Bytes from the dialer (`from`) to `to` are held.
    forward_held: bool,
    /// Bytes from `to` back to the dialer are held.
    backward_held: bool,
}

/// The proxies between `n` members, with the faults set on them.
pub struct Links {
    runtime: Option<tokio::runtime::Runtime>,
    /// Proxy address of link `(from, to)`.
    proxies: BTreeMap<(usize, usize), String>,
    /// Each link's state, watched by its connections.
    states: BTreeMap<(usize, usize), watch::Sender<LinkState>>,
    /// Member cluster addresses, by index.
    targets: Vec<String>,
    /// Lost directions: `(from, to)` → how.
    cut: Mutex<BTreeMap<(usize, usize), Fault>>,
}

impl std::fmt::Debug for Links {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Links")
            .field("targets", &self.targets)
            .field("cut", &self.cut_directions())
            .finish_non_exhaustive()
    }
}

impl Links {
    /// Starts a proxy for every ordered pair of the members whose cluster
    /// listeners are `cluster_addrs` (member `i` is `cluster_addrs[i]`),
    /// each on a free loopback port. Nothing is cut.
    pub fn start(cluster_addrs: &[String]) -> io::Result<Links> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("cursus-links")
            .enable_all()
            .build()?;
        let mut proxies = BTreeMap::new();
        let mut states = BTreeMap::new();
        for (from, _) in cluster_addrs.iter().enumerate() {
            for (to, target) in cluster_addrs.iter().enumerate() {
                if from == to {
                    continue;
                }
                // Bound here (a caller on another runtime cannot block on
                // this one), served there.
                let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
                listener.set_nonblocking(true)?;
                proxies.insert((from, to), listener.local_addr()?.to_string());
                let (tx, rx) = watch::channel(LinkState::default());
                states.insert((from, to), tx);
                let target = Arc::new(target.clone());
                runtime.spawn(async move {
                    if let Ok(listener) = TcpListener::from_std(listener) {
                        serve(listener, target, rx).await;
                    }
                });
            }
        }
        Ok(Links {
            runtime: Some(runtime),
            proxies,
            states,
            targets: cluster_addrs.to_vec(),
            cut: Mutex::new(BTreeMap::new()),
        })
    }

    /// Members linked.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// True for a mesh of no members.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Member `from`'s `--cluster-dial-overrides`: every other member's
    /// cluster address mapped to the proxy of `(from, that member)`.
    pub fn dial_overrides(&self, from: usize) -> String {
        self.proxies
            .iter()
            .filter(|((f, _), _)| *f == from)
            .map(|((_, to), proxy)| format!("{}={proxy}", self.targets[*to]))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// What `from` sends to `to` is lost, the `fault` way (replacing any
    /// fault of that direction).
    pub fn cut(&self, from: usize, to: usize, fault: Fault) {
        self.change(|cut| {
            cut.insert((from, to), fault);
        });
    }

    /// Member `i` neither reaches nor is reached by any other member.
    pub fn isolate(&self, i: usize, fault: Fault) {
        let others: Vec<usize> = (0..self.len()).filter(|j| *j != i).collect();
        self.split(&[i], &others, fault);
    }

    /// Every member of `a` loses contact with every member of `b`, both
    /// ways.
    pub fn split(&self, a: &[usize], b: &[usize], fault: Fault) {
        self.change(|cut| {
            for &x in a {
                for &y in b {
                    if x != y {
                        cut.insert((x, y), fault);
                        cut.insert((y, x), fault);
                    }
                }
            }
        });
    }

    /// Every direction passes again; held bytes are delivered.
    pub fn heal(&self) {
        self.change(BTreeMap::clear);
    }

    /// The directions cut now: `(from, to, fault)`.
    pub fn cut_directions(&self) -> Vec<(usize, usize, Fault)> {
        lock(&self.cut)
            .iter()
            .map(|(&(from, to), &fault)| (from, to, fault))
            .collect()
    }

    /// Applies `edit` to the lost directions and sets every link's proxy
    /// accordingly: link `(a, b)` holds its forward bytes when a→b is
    /// blackholed, its backward bytes when b→a is, and refuses when either
    /// is dropped.
    fn change(&self, edit: impl FnOnce(&mut BTreeMap<(usize, usize), Fault>)) {
        let mut cut = lock(&self.cut);
        edit(&mut cut);
        for (&(a, b), tx) in &self.states {
            let there = cut.get(&(a, b)).copied();
            let back = cut.get(&(b, a)).copied();
            let state = LinkState {
                refuse: there == Some(Fault::Drop) || back == Some(Fault::Drop),
                forward_held: there == Some(Fault::Blackhole),
                backward_held: back == Some(Fault::Blackhole),
            };
            tx.send_if_modified(|s| std::mem::replace(s, state) != state);
        }
    }
}

impl Drop for Links {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Accepts the dialer's connections to one link.
async fn serve(listener: TcpListener, target: Arc<String>, state: watch::Receiver<LinkState>) {
    while let Ok((inbound, _)) = listener.accept().await {
        let _ = inbound.set_nodelay(true);
        tokio::spawn(relay(inbound, Arc::clone(&target), state.clone()));
    }
}

/// Waits until the link state satisfies `ok`; `false` when the link is
/// gone.
async fn until(state: &mut watch::Receiver<LinkState>, ok: impl Fn(&LinkState) -> bool) -> bool {
    state.wait_for(|s| ok(s)).await.is_ok()
}

/// One dialed connection: held while the forward direction is held (a SYN
/// that does not arrive), then connected to the member and pumped both
/// ways until either side closes or the link starts refusing.
async fn relay(inbound: TcpStream, target: Arc<String>, mut state: watch::Receiver<LinkState>) {
    let refused = |s: &LinkState| s.refuse;
    if !until(&mut state, |s| s.refuse || !s.forward_held).await || refused(&state.borrow()) {
        return;
    }
    let Ok(outbound) = TcpStream::connect(target.as_str()).await else {
        return;
    };
    let _ = outbound.set_nodelay(true);
    let (in_read, in_write) = inbound.into_split();
    let (out_read, out_write) = outbound.into_split();
    let forward = pump(in_read, out_write, state.clone(), |s| s.forward_held);
    let backward = pump(out_read, in_write, state.clone(), |s| s.backward_held);
    tokio::select! {
        _ = async { tokio::join!(forward, backward) } => {}
        _ = until(&mut state, refused) => {}
    }
}

/// Copies `from` to `to` while `held` is false, stopping (not reading)
/// while it is true; at the end of `from`, shuts `to`'s write side.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut state: watch::Receiver<LinkState>,
    held: fn(&LinkState) -> bool,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if !until(&mut state, |s| !held(s)).await {
            return;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Read before the cut: delivered once it heals.
        if !until(&mut state, |s| !held(s)).await || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
    let _ = to.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream as StdStream;
    use std::time::Duration;

    /// An echo server on a free port (one thread per connection).
    fn echo() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = conn.read(&mut buf) {
                        if n == 0 || conn.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    /// Writes `msg` on `conn` and reads the echo, `None` when nothing
    /// arrives within `wait` (or the connection is closed).
    fn round_trip(conn: &mut StdStream, msg: &[u8], wait: Duration) -> Option<Vec<u8>> {
        conn.set_read_timeout(Some(wait)).unwrap();
        conn.write_all(msg).ok()?;
        let mut got = vec![0u8; msg.len()];
        conn.read_exact(&mut got).ok()?;
        Some(got)
    }

    fn proxy_of(links: &Links, from: usize, to: usize) -> String {
        links.proxies[&(from, to)].clone()
    }

    #[test]
    fn dial_overrides_name_every_other_member_through_its_proxy() {
        let members = vec![echo(), echo(), echo()];
        let links = Links::start(&members).unwrap();
        let routes = links.dial_overrides(1);
        let items: Vec<&str> = routes.split(',').collect();
        assert_eq!(items.len(), 2, "{routes}");
        assert!(items.contains(&format!("{}={}", members[0], proxy_of(&links, 1, 0)).as_str()));
        assert!(items.contains(&format!("{}={}", members[2], proxy_of(&links, 1, 2)).as_str()));
    }

    #[test]
    fn a_blackhole_holds_bytes_and_delivers_them_when_healed() {
        let links = Links::start(&[echo(), echo()]).unwrap();
        let mut conn = StdStream::connect(proxy_of(&links, 0, 1)).unwrap();
        let short = Duration::from_millis(300);
        assert_eq!(
            round_trip(&mut conn, b"one", short).as_deref(),
            Some(&b"one"[..])
        );
        links.isolate(0, Fault::Blackhole);
        assert_eq!(
            round_trip(&mut conn, b"two", short),
            None,
            "held, not closed"
        );
        links.heal();
        let mut late = [0u8; 3];
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        conn.read_exact(&mut late).unwrap();
        assert_eq!(&late, b"two");
    }

    #[test]
    fn one_way_loss_holds_only_that_direction() {
        let links = Links::start(&[echo(), echo()]).unwrap();
        let short = Duration::from_millis(300);
        // 0 → 1 lost: 0's requests to 1 never arrive; 1's requests to 0
        // arrive but their answers do not.
        links.cut(0, 1, Fault::Blackhole);
        let mut from_0 = StdStream::connect(proxy_of(&links, 0, 1)).unwrap();
        assert_eq!(round_trip(&mut from_0, b"a", short), None);
        let mut from_1 = StdStream::connect(proxy_of(&links, 1, 0)).unwrap();
        assert_eq!(round_trip(&mut from_1, b"b", short), None);
        links.heal();
        let mut fresh = StdStream::connect(proxy_of(&links, 1, 0)).unwrap();
        let long = Duration::from_secs(10);
        assert_eq!(
            round_trip(&mut fresh, b"c", long).as_deref(),
            Some(&b"c"[..])
        );
    }

    #[test]
    fn a_drop_closes_connections_and_refuses_new_ones_until_healed() {
        let links = Links::start(&[echo(), echo(), echo()]).unwrap();
        let long = Duration::from_secs(10);
        let mut conn = StdStream::connect(proxy_of(&links, 2, 0)).unwrap();
        assert!(round_trip(&mut conn, b"x", long).is_some());
        links.split(&[0], &[1, 2], Fault::Drop);
        assert_eq!(round_trip(&mut conn, b"y", long), None, "closed");
        let mut again = StdStream::connect(proxy_of(&links, 2, 0)).unwrap();
        assert_eq!(round_trip(&mut again, b"z", long), None, "refused");
        // Links not between the groups pass.
        let mut other = StdStream::connect(proxy_of(&links, 1, 2)).unwrap();
        assert!(round_trip(&mut other, b"w", long).is_some());
        assert_eq!(links.cut_directions().len(), 4);
        links.heal();
        assert!(links.cut_directions().is_empty());
        let mut healed = StdStream::connect(proxy_of(&links, 2, 0)).unwrap();
        assert!(round_trip(&mut healed, b"v", long).is_some());
    }
}
