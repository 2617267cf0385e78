//! The broker process under test, started the way `cursus-testkit` does
//! (binary next to this executable or `$CURSUS_BROKER_BIN`, ports read
//! back from the banner, its own data directory), but on the async runtime
//! and with its log kept: every start appends the broker's stderr to
//! `broker.log` in the run directory, so a violation can be traced.
//!
//! The ports are chosen below the kernel's ephemeral range. A client that
//! reconnects in a tight loop to a port in that range while nothing
//! listens can be handed that very port as its own source port (a TCP
//! self-connect), which would then hold the broker's port across the
//! restart; ports outside the range cannot be taken that way.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// Finds the broker binary: `explicit` (from `--broker-bin`), else
/// `$CURSUS_BROKER_BIN`, else `cursus-broker` next to this executable
/// (`target/<profile>/`), as `cursus-testkit` looks for it.
pub fn find_binary(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    let bin = match explicit.or_else(|| std::env::var_os("CURSUS_BROKER_BIN").map(PathBuf::from)) {
        Some(p) => p,
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
            exe.parent()
                .ok_or("executable has no directory")?
                .join("cursus-broker")
        }
    };
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "broker binary {} not found: build it (`cargo build -p cursus-broker`), \
             or pass --broker-bin / set CURSUS_BROKER_BIN",
            bin.display()
        ))
    }
}

/// Two free loopback ports below the ephemeral range (see the module docs).
fn pick_ports(hint: u64) -> Result<(u16, u16), String> {
    let p = pick_n_ports(hint, 2)?;
    Ok((p[0], p[1]))
}

/// `n` distinct free loopback ports below the ephemeral range (see the
/// module docs).
pub fn pick_n_ports(hint: u64, n: usize) -> Result<Vec<u16>, String> {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<u16>().ok())
        })
        .unwrap_or(32768);
    let (first, last) = (10_000u16, low.saturating_sub(1).max(10_100));
    let span = u64::from(last - first);
    let mut found = Vec::new();
    for i in 0..span {
        let port = first + ((hint + i * 7919) % span) as u16;
        if found.contains(&port) {
            continue;
        }
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            found.push(port);
            if found.len() == n {
                return Ok(found);
            }
        }
    }
    Err("no free loopback port below the ephemeral range".into())
}

/// A broker process that can be killed and restarted on the same ports and
/// data directory.
#[derive(Debug)]
pub struct BrokerProcess {
    bin: PathBuf,
    data_dir: PathBuf,
    log: PathBuf,
    extra_args: Vec<String>,
    child: Option<Child>,
    starts: u32,
    /// Client address, `127.0.0.1:PORT`.
    pub addr: String,
    /// Health endpoint address.
    pub health_addr: String,
}

impl BrokerProcess {
    /// Starts the broker with its data in `run_dir/data` and its log in
    /// `run_dir/broker.log`, passing `extra_args` (broker flags), and
    /// waits until it is ready.
    pub async fn start(
        bin: &Path,
        run_dir: &Path,
        extra_args: &[&str],
        port_hint: u64,
    ) -> Result<BrokerProcess, String> {
        let (port, health) = pick_ports(port_hint)?;
        let mut broker = BrokerProcess::prepare(
            bin,
            &run_dir.join("data"),
            &run_dir.join("broker.log"),
            extra_args,
            format!("127.0.0.1:{port}"),
            format!("127.0.0.1:{health}"),
        );
        broker.restart().await?;
        broker.wait_ready(Duration::from_secs(60)).await?;
        Ok(broker)
    }

    /// A broker not started yet, on the given addresses, with its data in
    /// `data_dir` and its log in `log` (a cluster member: every member's
    /// addresses must be known before the first starts).
    pub fn prepare(
        bin: &Path,
        data_dir: &Path,
        log: &Path,
        extra_args: &[&str],
        addr: String,
        health_addr: String,
    ) -> BrokerProcess {
        BrokerProcess {
            bin: bin.to_owned(),
            data_dir: data_dir.to_owned(),
            log: log.to_owned(),
            extra_args: extra_args.iter().map(|s| (*s).to_owned()).collect(),
            child: None,
            starts: 0,
            addr,
            health_addr,
        }
    }

    /// The broker log (every start appends to it).
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Spawns the process once; `Err` when it exits before its banner.
    async fn spawn(&mut self) -> Result<(), String> {
        self.starts += 1;
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("open {}: {e}", self.log.display()))?;
        std::io::Write::write_all(
            &mut log,
            format!("===== chaos: broker start #{} =====\n", self.starts).as_bytes(),
        )
        .map_err(|e| format!("write {}: {e}", self.log.display()))?;
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--listen")
            .arg(&self.addr)
            .arg("--health-listen")
            .arg(&self.health_addr)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .args(&self.extra_args)
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("start {}: {e}", self.bin.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut reader = BufReader::new(stdout);
        let mut banner = String::new();
        let read = tokio::time::timeout(Duration::from_secs(30), reader.read_line(&mut banner))
            .await
            .map_err(|_| "no broker banner within 30 s".to_owned())?
            .map_err(|e| format!("read broker banner: {e}"))?;
        if read == 0 || !banner.contains("addr=") {
            let status = child.wait().await.map_err(|e| e.to_string())?;
            return Err(format!("broker exited before its banner ({status})"));
        }
        // Keep reading stdout so a later line never meets a closed pipe.
        tokio::spawn(async move {
            let mut sink = Vec::new();
            let _ = reader.read_to_end(&mut sink).await;
        });
        self.child = Some(child);
        Ok(())
    }

    /// (Re)starts the broker on the same ports and data directory. The
    /// kernel may hold a port for a moment after a kill: the start is
    /// repeated (up to 10 s) while the broker exits before its banner.
    pub async fn restart(&mut self) -> Result<(), String> {
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            match self.spawn().await {
                Ok(()) => return Ok(()),
                Err(_) if Instant::now() < give_up => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => {
                    return Err(format!(
                        "broker did not restart: {e} (see {})",
                        self.log.display()
                    ))
                }
            }
        }
    }

    /// SIGKILL (no clean shutdown), then reaps the process.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    /// SIGTERM (a clean stop: the broker hands its leaderships over and
    /// leaves the cluster first), then waits up to `timeout` for the
    /// process to exit; one still running then is an error (and killed).
    pub async fn stop(&mut self, timeout: Duration) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if let Some(pid) = child.id() {
            cursus_testkit::signal::send(pid, cursus_testkit::signal::Signal::Term)?;
        }
        match tokio::time::timeout(timeout, child.wait()).await {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(format!(
                "broker stopped with {status} after SIGTERM; see {}",
                self.log.display()
            )),
            Ok(Err(e)) => Err(format!("waiting for the broker: {e}")),
            Err(_) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                Err(format!(
                    "broker still running {timeout:?} after SIGTERM; see {}",
                    self.log.display()
                ))
            }
        }
    }

    /// True when the process has exited on its own (not killed by us).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
    }

    /// The process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// The broker's resident set size in KiB (`VmRSS` of
    /// `/proc/<pid>/status`).
    pub fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    }

    /// Polls `GET /ready` until it answers 200 (recovery finished).
    pub async fn wait_ready(&mut self, timeout: Duration) -> Result<(), String> {
        let give_up = Instant::now() + timeout;
        loop {
            if ready(&self.health_addr).await {
                return Ok(());
            }
            if let Some(status) = self.exited() {
                return Err(format!(
                    "broker exited during recovery ({status}); see {}",
                    self.log.display()
                ));
            }
            if Instant::now() >= give_up {
                return Err(format!(
                    "broker not ready within {} s; see {}",
                    timeout.as_secs(),
                    self.log.display()
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// One `GET /ready`: true on HTTP 200.
async fn ready(health_addr: &str) -> bool {
    let attempt = async {
        let mut s = tokio::net::TcpStream::connect(health_addr).await.ok()?;
        s.write_all(b"GET /ready HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .ok()?;
        let mut head = [0u8; 16];
        let n = s.read(&mut head).await.ok()?;
        Some(head[..n].starts_with(b"HTTP/1.1 200"))
    };
    tokio::time::timeout(Duration::from_secs(2), attempt)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}
