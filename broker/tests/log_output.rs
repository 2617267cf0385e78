//! The broker's log: plain text when stderr is not a terminal (files, pipes,
//! CI logs), so no ANSI colour codes end up in them.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

#[test]
fn a_piped_log_has_no_colour_codes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_cursus-broker"))
        .args(["--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--log-level", "info"])
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn broker");
    let mut startup = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut startup)
        .expect("startup line");
    assert!(
        startup.starts_with("cursus-broker listening"),
        "{startup:?}"
    );
    // Read the log up to the "ready" line, then stop the broker.
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut log = String::new();
    while !log.contains("ready") {
        if stderr.read_line(&mut log).expect("read log") == 0 {
            break;
        }
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    let _ = stderr.read_to_string(&mut log);
    assert!(
        log.contains("INFO"),
        "an info-level log was written: {log:?}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a piped log: {log:?}"
    );
}
