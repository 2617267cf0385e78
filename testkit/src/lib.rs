//! Starts a real `cursus-broker` process for tests: port 0 on 127.0.0.1 (the
//! broker reports the port it bound), its own temporary data directory, and
//! cleanup when the handle drops.
//!
//! The broker binary is found next to the running test executable
//! (`target/<profile>/cursus-broker`) or at `$CURSUS_BROKER_BIN`; it is built
//! with cargo on first use so `cargo test` works without a separate step.

#![warn(missing_docs)]

pub mod cluster;
pub mod links;
pub mod pki;
pub mod signal;
pub mod wait;

pub use cluster::{ClusterMember, TestCluster};
pub use links::{Fault, Links};
pub use wait::{eventually, pause, poll_until, Probe, Wait, POLL_INTERVAL};

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// How long a killed broker's port may stay taken before a restart fails.
const PORT_FREE_TIMEOUT: Duration = Duration::from_secs(5);

/// A running broker. Killed (and its data removed) on drop.
pub struct TestBroker {
    child: Option<Child>,
    data: tempfile::TempDir,
    /// Client address, `127.0.0.1:PORT`.
    pub addr: String,
    /// Health endpoint address.
    pub health_addr: String,
    /// TLS listener address, when the configuration has `tls_listen`.
    pub tls_addr: Option<String>,
    extra_config: Option<String>,
}

/// Path of the broker binary, building it once per test process.
pub fn broker_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("CURSUS_BROKER_BIN") {
            return PathBuf::from(p);
        }
        // target/<profile>/deps/<test-exe> -> target/<profile>
        let exe = std::env::current_exe().expect("current exe");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>");
        let bin = profile_dir.join("cursus-broker");
        let target_dir = profile_dir.parent().expect("target dir");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
        let status = Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "cursus-broker",
                "--bin",
                "cursus-broker",
                "--manifest-path",
                manifest,
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .status()
            .expect("run cargo build for cursus-broker");
        assert!(status.success(), "building cursus-broker failed");
        assert!(
            bin.exists(),
            "cargo built cursus-broker but {} is missing; set CURSUS_BROKER_BIN",
            bin.display()
        );
        bin
    })
    .clone()
}

impl TestBroker {
    /// Starts a broker with default settings.
    pub fn start() -> TestBroker {
        Self::start_with_config("")
    }

    /// Starts a broker with extra TOML configuration (e.g. limits).
    pub fn start_with_config(toml: &str) -> TestBroker {
        let data = tempfile::tempdir().expect("temp dir");
        let mut broker = TestBroker {
            child: None,
            data,
            addr: String::new(),
            health_addr: String::new(),
            tls_addr: None,
            extra_config: (!toml.is_empty()).then(|| toml.to_owned()),
        };
        broker.spawn("127.0.0.1:0", "127.0.0.1:0");
        broker
    }

    /// The broker's data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.data.path().join("data")
    }

    fn spawn(&mut self, listen: &str, health: &str) {
        let mut cmd = Command::new(broker_binary());
        cmd.arg("--listen")
            .arg(listen)
            .arg("--health-listen")
            .arg(health);
        cmd.arg("--data-dir").arg(self.data_dir());
        if let Some(toml) = &self.extra_config {
            let path = self.data.path().join("broker.toml");
            let mut f = std::fs::File::create(&path).expect("config file");
            f.write_all(toml.as_bytes()).expect("write config");
            cmd.arg("--config").arg(path);
        }
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env("RUST_LOG", "warn");
        let mut child = cmd.spawn().expect("start cursus-broker");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read broker banner");
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|t| t.strip_prefix(name))
                .unwrap_or_else(|| panic!("broker banner lacks {name}: {line:?}"))
                .to_owned()
        };
        self.addr = field("addr=");
        self.health_addr = field("health=");
        self.tls_addr = line
            .split_whitespace()
            .find_map(|t| t.strip_prefix("tls_addr="))
            .map(str::to_owned);
        self.child = Some(child);
    }

    /// Kills the broker with SIGKILL (no clean shutdown) and starts it
    /// again on the same ports and data directory.
    pub fn kill_and_restart(&mut self) {
        self.kill();
        let (addr, health) = (self.addr.clone(), self.health_addr.clone());
        // The old sockets are gone once the process is reaped; retry briefly
        // in case the kernel still holds the port.
        let free = || std::net::TcpListener::bind(&addr).map(drop);
        eventually(
            PORT_FREE_TIMEOUT,
            &format!("port {addr} to come free"),
            free,
        );
        self.spawn(&addr, &health);
    }

    /// The broker's process id (e.g. to send it SIGHUP), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The broker's resident set size in KiB (VmRSS of
    /// `/proc/<pid>/status`), while it runs on Linux.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib_of(self.pid()?)
    }

    /// CPU time the broker process has used so far (see [`cpu_time_of`]).
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        cpu_time_of(self.pid()?)
    }

    /// Kills the broker without restarting it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// CPU time (user + system, every thread) process `pid` has used so far,
/// from `/proc/<pid>/stat` (in USER_HZ ticks, 10 ms on Linux); `None` where
/// that is not readable. Benches divide it by the records handled, a cost
/// that holds on a busy machine where throughput does not.
pub fn cpu_time_of(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: the fields start after its ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line (1-based), 12
    // and 13 after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// The resident set size in KiB of process `pid` (VmRSS of
/// `/proc/<pid>/status`); `None` where that is not readable.
pub fn rss_kib_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

impl Drop for TestBroker {
    fn drop(&mut self) {
        self.kill();
    }
}
