//! Signals to broker processes by pid (the `kill` utility, so that no
//! unsafe code is needed here): pause a broker past its session with
//! [`Signal::Stop`], wake it with [`Signal::Cont`], stop it cleanly with
//! [`Signal::Term`], make it reload its TLS files with [`Signal::Hup`].

use std::process::{Command, Stdio};

/// A signal a test sends to a broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGSTOP: the process is frozen (a GC pause, a VM freeze) and
    /// answers nothing; its sockets stay open.
    Stop,
    /// SIGCONT: a stopped process runs again.
    Cont,
    /// SIGTERM: a clean stop.
    Term,
    /// SIGHUP: reload the TLS files.
    Hup,
}

impl Signal {
    fn flag(self) -> &'static str {
        match self {
            Signal::Stop => "-STOP",
            Signal::Cont => "-CONT",
            Signal::Term => "-TERM",
            Signal::Hup => "-HUP",
        }
    }
}

/// Sends `signal` to process `pid`; `Err` when `kill` fails (no such
/// process, or the utility is missing).
pub fn send(pid: u32, signal: Signal) -> Result<(), String> {
    let status = Command::new("kill")
        .arg(signal.flag())
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("run kill: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kill {} {pid}: {status}", signal.flag()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_process_is_frozen_until_continued() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id();
        let state = || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
            stat.rsplit_once(')')
                .unwrap()
                .1
                .split_whitespace()
                .next()
                .unwrap()
                .to_owned()
        };
        send(pid, Signal::Stop).unwrap();
        crate::eventually(std::time::Duration::from_secs(10), "stopped", || {
            state() == "T"
        });
        send(pid, Signal::Cont).unwrap();
        crate::eventually(std::time::Duration::from_secs(10), "running", || {
            state() != "T"
        });
        send(pid, Signal::Term).unwrap();
        assert!(!child.wait().unwrap().success());
        assert!(send(pid, Signal::Cont).is_err(), "gone");
    }
}
