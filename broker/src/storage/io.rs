//! The storage layer's durability-relevant file I/O, with injectable faults.
//!
//! Appends to segments and journals, the writes of atomic file
//! replacement and every fsync/fdatasync go through the few functions here.
//! Normally they call `std` and nothing else. When the broker was started
//! with `--storage-fault SPEC` (testing only, like `--fault`) a matching call
//! fails on purpose, so the paths a healthy disk never takes (fsync failure,
//! full disk, a write torn by a crash) can be tested against the real broker
//! (docs/standalone-rules.md, "Storage faults").
//!
//! `SPEC` is `OP:KIND[:after=N][:times=N|*][:path=SUBSTRING]`:
//!
//! * `OP`: `write` (appends and atomic-file writes) or `fsync` (fsync and
//!   fdatasync of files and directories);
//! * `KIND`: `fail` (`EIO`), `enospc`, `edquot` (a `write` of either first
//!   writes half its buffer, as a filling disk does), or `short` (`write`
//!   only: writes half the buffer, then aborts the process as `kill -9`
//!   would);
//! * `after=N`: the first N matching calls succeed (default 0);
//! * `times=N`: how many matching calls fail after those (default 1; `*` =
//!   every later one);
//! * `path=SUBSTRING`: only calls on paths containing it match.
//!
//! The plan is process-wide ([`install`]): a broker is one process.
//!
//! So is the sync observer ([`observe_syncs`]): it is told how long each
//! real fsync/fdatasync took (the broker's fsync latency metric).

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};

use tracing::error;

const EIO: i32 = 5;
const ENOSPC: i32 = 28;
#[cfg(target_os = "linux")]
const EDQUOT: i32 = 122;
#[cfg(not(target_os = "linux"))]
const EDQUOT: i32 = 69;

/// True if `err` says the disk (or the quota) is full.
pub fn is_disk_full(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(ENOSPC | EDQUOT))
}

/// The call a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultOp {
    /// Appends and atomic-file writes.
    Write,
    /// fsync / fdatasync of files and directories.
    Fsync,
}

/// What a faulted call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Fails with `EIO`.
    Fail,
    /// Fails with `ENOSPC` (a write first writes half its buffer).
    Enospc,
    /// Fails with `EDQUOT` (a write first writes half its buffer).
    Edquot,
    /// Writes half the buffer, then aborts the process.
    Short,
}

/// One `--storage-fault` rule; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageFault {
    /// The call it applies to.
    pub op: FaultOp,
    /// What it does.
    pub kind: FaultKind,
    /// Matching calls that succeed first.
    pub after: u64,
    /// Matching calls that fail after those; `None` = all.
    pub times: Option<u64>,
    /// Only paths containing this match.
    pub path: Option<String>,
}

impl FromStr for StorageFault {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("storage fault {spec:?}: {why}");
        let mut parts = spec.split(':');
        let op = match parts.next() {
            Some("write") => FaultOp::Write,
            Some("fsync") => FaultOp::Fsync,
            _ => return Err(bad("OP must be write or fsync")),
        };
        let kind = match parts.next() {
            Some("fail") => FaultKind::Fail,
            Some("enospc") => FaultKind::Enospc,
            Some("edquot") => FaultKind::Edquot,
            Some("short") if op == FaultOp::Write => FaultKind::Short,
            _ => {
                return Err(bad(
                    "KIND must be fail, enospc, edquot or (write only) short",
                ))
            }
        };
        let mut fault = StorageFault {
            op,
            kind,
            after: 0,
            times: Some(1),
            path: None,
        };
        for option in parts {
            match option.split_once('=') {
                Some(("after", n)) => {
                    fault.after = n.parse().map_err(|_| bad("after= needs a number"))?;
                }
                Some(("times", "*")) => fault.times = None,
                Some(("times", n)) => {
                    let n = n.parse().ok().filter(|&n| n > 0);
                    fault.times = Some(n.ok_or_else(|| bad("times= needs a count > 0 or *"))?);
                }
                Some(("path", p)) if !p.is_empty() => fault.path = Some(p.to_owned()),
                _ => return Err(bad("options are after=N, times=N|* and path=SUBSTRING")),
            }
        }
        Ok(fault)
    }
}

/// A rule and the number of matching calls it has seen.
#[derive(Debug)]
struct Armed {
    fault: StorageFault,
    seen: AtomicU64,
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static PLAN: RwLock<Vec<Arc<Armed>>> = RwLock::new(Vec::new());

/// Makes `faults` the process's fault plan (an empty list turns injection
/// off). Called once at startup.
pub fn install(faults: &[StorageFault]) {
    let armed = faults
        .iter()
        .map(|f| {
            Arc::new(Armed {
                fault: f.clone(),
                seen: AtomicU64::new(0),
            })
        })
        .collect();
    *PLAN.write().unwrap_or_else(|e| e.into_inner()) = armed;
    ACTIVE.store(!faults.is_empty(), Ordering::Release);
}

/// Told how long each real fsync/fdatasync took, whatever its outcome.
pub type SyncObserver = Box<dyn Fn(Duration) + Send + Sync>;

static SYNC_OBSERVER: OnceLock<SyncObserver> = OnceLock::new();

/// Makes `observer` the process's sync observer. Only the first call
/// counts; returns false for a later one.
pub fn observe_syncs(observer: SyncObserver) -> bool {
    SYNC_OBSERVER.set(observer).is_ok()
}

/// Runs the sync `f`, timing it for the observer if there is one.
fn timed_sync(f: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    let Some(observer) = SYNC_OBSERVER.get() else {
        return f();
    };
    let started = Instant::now();
    let outcome = f();
    observer(started.elapsed());
    outcome
}

/// The fault to inject into this call, if any (counts the call).
fn injected(op: FaultOp, path: &Path) -> Option<FaultKind> {
    if !ACTIVE.load(Ordering::Acquire) {
        return None;
    }
    let plan = PLAN.read().unwrap_or_else(|e| e.into_inner());
    let path = path.to_string_lossy();
    plan.iter().find_map(|armed| {
        let f = &armed.fault;
        if f.op != op || f.path.as_deref().is_some_and(|p| !path.contains(p)) {
            return None;
        }
        let n = armed.seen.fetch_add(1, Ordering::SeqCst);
        let fires = n >= f.after && f.times.map_or(true, |t| n - f.after < t);
        fires.then_some(f.kind)
    })
}

fn injected_error(kind: FaultKind, op: FaultOp, path: &Path) -> io::Error {
    let errno = match kind {
        FaultKind::Enospc => ENOSPC,
        FaultKind::Edquot => EDQUOT,
        FaultKind::Fail | FaultKind::Short => EIO,
    };
    error!(path = %path.display(), ?op, ?kind, "injected storage fault");
    io::Error::from_raw_os_error(errno)
}

/// Dies in the middle of a write, the way `kill -9` would: no cleanup, no
/// further I/O.
fn crash(path: &Path) -> ! {
    error!(path = %path.display(), "injected short write: aborting the process");
    std::process::abort()
}

/// `file.write_all_at(buf, pos)`.
pub(crate) fn write_all_at(file: &File, path: &Path, buf: &[u8], pos: u64) -> io::Result<()> {
    match injected(FaultOp::Write, path) {
        None => file.write_all_at(buf, pos),
        Some(kind) => {
            file.write_all_at(&buf[..buf.len() / 2], pos)?;
            if kind == FaultKind::Short {
                crash(path);
            }
            Err(injected_error(kind, FaultOp::Write, path))
        }
    }
}

/// `file.write_all(buf)`.
pub(crate) fn write_all(file: &mut File, path: &Path, buf: &[u8]) -> io::Result<()> {
    match injected(FaultOp::Write, path) {
        None => file.write_all(buf),
        Some(kind) => {
            file.write_all(&buf[..buf.len() / 2])?;
            if kind == FaultKind::Short {
                crash(path);
            }
            Err(injected_error(kind, FaultOp::Write, path))
        }
    }
}

/// `file.sync_data()` (fdatasync).
pub(crate) fn sync_data(file: &File, path: &Path) -> io::Result<()> {
    match injected(FaultOp::Fsync, path) {
        None => timed_sync(|| file.sync_data()),
        Some(kind) => Err(injected_error(kind, FaultOp::Fsync, path)),
    }
}

/// `file.sync_all()` (fsync), also of directories.
pub(crate) fn sync_all(file: &File, path: &Path) -> io::Result<()> {
    match injected(FaultOp::Fsync, path) {
        None => timed_sync(|| file.sync_all()),
        Some(kind) => Err(injected_error(kind, FaultOp::Fsync, path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let f: StorageFault = "fsync:fail:after=3:path=topics/t".parse().unwrap();
        assert_eq!(
            f,
            StorageFault {
                op: FaultOp::Fsync,
                kind: FaultKind::Fail,
                after: 3,
                times: Some(1),
                path: Some("topics/t".into()),
            }
        );
        let f: StorageFault = "write:enospc:times=*".parse().unwrap();
        assert_eq!((f.kind, f.after, f.times), (FaultKind::Enospc, 0, None));
        assert_eq!(
            "write:short:after=9".parse::<StorageFault>().unwrap().kind,
            FaultKind::Short
        );
        for bad in [
            "",
            "read:fail",
            "fsync",
            "fsync:short",
            "write:boom",
            "write:fail:after=x",
            "write:fail:times=0",
            "write:fail:path=",
            "write:fail:later=1",
        ] {
            assert!(bad.parse::<StorageFault>().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn faults_fire_after_the_given_calls_for_the_given_times() {
        let dir = tempfile::tempdir().unwrap();
        // Only this test's files match, so storage tests running meanwhile
        // are unaffected.
        let path = dir.path().join("io-fault-test-file");
        let file = File::create(&path).unwrap();
        install(&["fsync:fail:after=1:times=2:path=io-fault-test-file"
            .parse()
            .unwrap()]);
        let outcomes: Vec<bool> = (0..4).map(|_| sync_data(&file, &path).is_ok()).collect();
        let enospc: StorageFault = "write:enospc:path=io-fault-test-file".parse().unwrap();
        install(&[enospc]);
        let err = write_all_at(&file, &path, b"0123456789", 0).unwrap_err();
        install(&[]);
        assert_eq!(outcomes, [true, false, false, true]);
        assert!(is_disk_full(&err));
        assert_eq!(std::fs::read(&path).unwrap(), b"01234", "half was written");
        write_all_at(&file, &path, b"ok", 0).unwrap();
    }

    #[test]
    fn disk_full_errors_are_recognised() {
        assert!(is_disk_full(&io::Error::from_raw_os_error(ENOSPC)));
        assert!(is_disk_full(&io::Error::from_raw_os_error(EDQUOT)));
        assert!(!is_disk_full(&io::Error::from_raw_os_error(EIO)));
    }
}
