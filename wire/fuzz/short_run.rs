//! Short fuzz runs on stable Rust: a target's body over its committed seed
//! corpus, then a bounded number of deterministic pseudo-random mutations of
//! those seeds (xorshift; no coverage feedback). Included with `#[path]` by
//! `wire/tests/fuzz_short.rs` and `broker/tests/fuzz_short.rs`; the long,
//! coverage-guided runs are `make fuzz` (cargo-fuzz, nightly).

#![allow(dead_code)]

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

/// Largest input a mutation produces.
const MAX_LEN: usize = 64 * 1024;

/// What one short run did.
#[derive(Debug)]
pub struct ShortRun {
    /// Seed inputs run.
    pub seeds: usize,
    /// Mutated inputs run.
    pub mutations: usize,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

/// Set by the panic hook: a panic anywhere, also on a thread or task that
/// swallows it (tokio catches panics of spawned tasks).
static PANICKED: AtomicBool = AtomicBool::new(false);

fn watch_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            PANICKED.store(true, Ordering::SeqCst);
            previous(info);
        }));
    });
}

/// The files of `dir`, sorted by name.
pub fn seeds(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|e| e.expect("seed entry").path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let seeds: Vec<_> = paths
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read seed");
            (p, bytes)
        })
        .collect();
    assert!(!seeds.is_empty(), "empty seed corpus {}", dir.display());
    seeds
}

/// xorshift64*: deterministic and good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn new(name: &str) -> Rng {
        // FNV-1a of the target name: each target its own sequence.
        let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x1000_0000_01b3)
        });
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Applies one to four random edits to `input` (splicing from `others`).
fn mutate(rng: &mut Rng, input: &[u8], others: &[(PathBuf, Vec<u8>)]) -> Vec<u8> {
    const INTERESTING: &[u8] = &[0, 1, 0x7f, 0x80, 0xfe, 0xff, b'=', b' ', b'\n'];
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        let at = rng.below(len + 1);
        match rng.below(9) {
            0 if len > 0 => out[at.min(len - 1)] ^= 1 << rng.below(8),
            1 if len > 0 => out[at.min(len - 1)] = rng.next() as u8,
            2 if len > 0 => out[at.min(len - 1)] = INTERESTING[rng.below(INTERESTING.len())],
            3 => {
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                out.splice(at..at, bytes);
            }
            4 if len > 0 => {
                let end = (at + 1 + rng.below(32)).min(len);
                out.drain(at.min(len - 1)..end);
            }
            5 if len > 0 => {
                // Duplicate a range (repeated frames, repeated fields).
                let start = at.min(len - 1);
                let end = (start + 1 + rng.below(256)).min(len);
                let copy = out[start..end].to_vec();
                out.splice(end..end, copy);
            }
            6 => {
                // Splice in part of another seed.
                let other = &others[rng.below(others.len())].1;
                if !other.is_empty() {
                    let start = rng.below(other.len());
                    let end = start + 1 + rng.below(other.len() - start);
                    out.splice(at..at, other[start..end].iter().copied());
                }
            }
            7 => out.truncate(at),
            _ if len >= 4 => {
                // Overwrite a big-endian u32 (lengths, counts) with an edge value.
                let start = rng.below(len - 3);
                let v: u32 = [0, 1, 0x7fff_ffff, 0xffff_ffff, rng.next() as u32][rng.below(5)];
                out[start..start + 4].copy_from_slice(&v.to_be_bytes());
            }
            _ => {}
        }
        out.truncate(MAX_LEN);
    }
    out
}

fn run_one(name: &str, what: &str, input: &[u8], body: &impl Fn(&[u8])) {
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| body(input)));
    if outcome.is_err() || PANICKED.load(Ordering::SeqCst) {
        let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
        panic!(
            "fuzz target {name} panicked on {what}; input ({} bytes): {hex}",
            input.len()
        );
    }
}

/// Runs `body` over the seeds in `seed_dir`, then over up to
/// `max_mutations` mutations of them, stopping early once `budget` is
/// spent. Panics (naming the input, in hex) if the body panics anywhere.
pub fn run(
    name: &str,
    seed_dir: &Path,
    max_mutations: usize,
    budget: Duration,
    body: impl Fn(&[u8]),
) -> ShortRun {
    watch_panics();
    let start = Instant::now();
    let corpus = seeds(seed_dir);
    for (path, input) in &corpus {
        run_one(name, &path.display().to_string(), input, &body);
    }
    let mut rng = Rng::new(name);
    let mut mutations = 0;
    while mutations < max_mutations && start.elapsed() < budget {
        let base = &corpus[rng.below(corpus.len())].1;
        let input = mutate(&mut rng, base, &corpus);
        run_one(name, &format!("mutation {mutations}"), &input, &body);
        mutations += 1;
    }
    let run = ShortRun {
        seeds: corpus.len(),
        mutations,
        elapsed: start.elapsed(),
    };
    eprintln!(
        "fuzz short run {name}: {} seeds + {} mutations in {:?}",
        run.seeds, run.mutations, run.elapsed
    );
    run
}

/// The committed seeds of a target are exactly `seeds` (built from the
/// reference vectors and the encoders). With `CURSUS_UPDATE_SEEDS` set it
/// rewrites them instead; otherwise a missing or stale seed fails, so a
/// format change cannot leave the corpus silently behind.
pub fn check_or_write_seeds(dir: &Path, seeds: &[(&str, Vec<u8>)]) {
    if std::env::var_os("CURSUS_UPDATE_SEEDS").is_some() {
        std::fs::create_dir_all(dir).expect("seed directory");
        for (name, bytes) in seeds {
            std::fs::write(dir.join(name), bytes).expect("write seed");
        }
        return;
    }
    for (name, bytes) in seeds {
        let path = dir.join(name);
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == *bytes,
            "{} is missing or stale; regenerate with CURSUS_UPDATE_SEEDS=1 cargo test --test fuzz_short",
            path.display()
        );
    }
}
