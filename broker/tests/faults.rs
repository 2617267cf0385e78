//! Injected faults (`--fault`): the testing aid that lets client retry,
//! redirect and deduplication paths run against the real broker.

mod common;

use common::*;
use cursus_wire::ErrorClass;

#[tokio::test]
async fn error_fault_answers_without_executing_for_the_given_count() {
    let broker = TestBroker::start_with(&["--fault", "CREATE:error:1:NOT_LEADER leader=h:1"]);
    let mut c = broker.client().await;
    let e = c.error("CREATE topic=a partitions=1").await;
    assert_eq!(
        (e.code.as_str(), e.class, e.retryable),
        ("NOT_LEADER", ErrorClass::Routing, true)
    );
    assert_eq!(e.fields.get("leader").map(String::as_str), Some("h:1"));
    // Not executed: the topic does not exist; and the fault was used up.
    assert!(!c.ok("LIST").await.contains("a"));
    c.ok("CREATE topic=a partitions=1").await;
    assert!(c.ok("LIST").await.contains("a"));
}

#[tokio::test]
async fn error_after_fault_executes_then_answers_with_the_error() {
    let broker =
        TestBroker::start_with(&["--fault", "CREATE:error-after:*:command_failed reason=test"]);
    let mut c = broker.client().await;
    for _ in 0..2 {
        let e = c.error("CREATE topic=b partitions=1").await;
        assert_eq!(
            (e.code.as_str(), e.class, e.retryable),
            ("command_failed", ErrorClass::Internal, false)
        );
    }
    assert!(c.ok("LIST").await.contains("b"), "the command ran");
}

#[tokio::test]
async fn drop_after_fault_executes_then_closes_without_a_reply() {
    let broker = TestBroker::start_with(&["--fault", "CREATE:drop-after:1"]);
    let mut c = broker.client().await;
    c.send_line("CREATE topic=d partitions=1").await;
    assert!(c.recv().await.is_none(), "closed without a reply");
    let mut c = broker.client().await;
    assert!(c.ok("LIST").await.contains("d"), "the command ran");
}

#[test]
fn malformed_fault_is_a_startup_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cursus-broker"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--health-listen",
            "127.0.0.1:0",
            "--fault",
            "CREATE:explode:1:x",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("explode"), "{stderr}");
}
