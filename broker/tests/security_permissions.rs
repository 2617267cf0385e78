//! Authorization (docs/security.md "Authorization"): every row of the
//! command → permission table, the batch PUBLISH, cluster and internal
//! commands, and topic policies (ACLs with names and `*`, deny_read,
//! deny_write) with SASL on and off.

mod security_common;

use security_common::*;

/// The permissions of each row of the table, with a request line that
/// reaches the handler quickly (usually a validation error) once
/// authorized. Kept apart from the broker's own table on purpose.
const ROWS: &[(&str, &[&str])] = &[
    ("CREATE", &["admin"]),
    ("ALTER_TOPIC_CONFIG", &["admin"]),
    ("DELETE", &["admin"]),
    ("TRUNCATE", &["admin"]),
    ("LIST", &[]),
    ("DESCRIBE", &[]),
    ("METADATA", &[]),
    ("FIND_COORDINATOR", &[]),
    ("LIST_OFFSETS", &["topic.read"]),
    ("PUBLISH", &["topic.write"]),
    ("CONSUME", &["topic.read", "group"]),
    ("STREAM", &["topic.read", "group"]),
    ("REGISTER_GROUP", &["group"]),
    ("JOIN_GROUP", &["group"]),
    ("SYNC_GROUP", &["group"]),
    ("HEARTBEAT", &["group"]),
    ("LEAVE_GROUP", &["group"]),
    ("GROUP_STATUS", &["group"]),
    ("LIST_GROUPS", &["group"]),
    ("COMMIT_OFFSET", &["group"]),
    ("BATCH_COMMIT", &["group"]),
    ("FETCH_OFFSET", &["group"]),
    ("INIT_PRODUCER_ID transactional_id=tx", &["transaction"]),
    ("INIT_PRODUCER_ID", &["topic.write"]),
    ("BEGIN_TXN", &["transaction"]),
    ("END_TXN", &["transaction"]),
    ("TXN_STATUS", &["transaction"]),
    ("TXN_PUBLISH", &["transaction", "topic.write"]),
    ("TXN_APPEND_STREAM", &["transaction", "topic.write"]),
    ("SEND_OFFSETS_TO_TXN", &["transaction", "group"]),
    ("APPEND_STREAM", &["topic.write"]),
    ("SAVE_SNAPSHOT", &["topic.write"]),
    ("READ_STREAM", &["topic.read"]),
    ("STREAM_VERSION", &["topic.read"]),
    ("READ_SNAPSHOT", &["topic.read"]),
    ("BROWSE_MESSAGES", &["topic.read"]),
    ("READ_STREAM_HISTORY", &["topic.read"]),
    ("AGGREGATE_REPLAY_PROOF", &["topic.read"]),
    ("AGGREGATE_EVENT_RANGE_READ", &["topic.read"]),
    ("LIST_CLUSTER", &["admin"]),
    ("CLUSTER_STATUS", &["admin"]),
    ("ELECT_LEADER", &["admin"]),
];

const PERMISSIONS: [&str; 5] = ["admin", "topic.read", "topic.write", "group", "transaction"];

/// The principal with every permission but `missing`.
fn all_but(missing: &str) -> String {
    format!("all-but-{missing}")
}

/// The principal with exactly `permissions` (a lone `transaction` stands
/// in for "authenticated, nothing else").
fn exactly(permissions: &[&str]) -> String {
    if permissions.is_empty() {
        return "exactly-transaction".into();
    }
    format!("exactly-{}", permissions.join("+"))
}

/// Users for every principal the table tests need; token = principal.
fn table_users() -> String {
    let mut users: Vec<(String, Vec<&str>)> = PERMISSIONS
        .iter()
        .map(|m| {
            (
                all_but(m),
                PERMISSIONS.iter().copied().filter(|p| p != m).collect(),
            )
        })
        .collect();
    for (_, permissions) in ROWS {
        let name = exactly(permissions);
        if !users.iter().any(|(n, _)| *n == name) {
            let list = if permissions.is_empty() {
                vec!["transaction"]
            } else {
                permissions.to_vec()
            };
            users.push((name, list));
        }
    }
    users.push(("admin".into(), vec!["*"]));
    let refs: Vec<(&str, &str, &[&str])> = users
        .iter()
        .map(|(n, p)| (n.as_str(), n.as_str(), p.as_slice()))
        .collect();
    users_toml(&refs)
}

async fn authenticated(addr: &str, principal: &str) -> Client {
    let mut c = Client::plain(addr).await;
    let reply = c
        .ok(&format!("AUTH principal={principal} token={principal}"))
        .await;
    assert_eq!(reply, format!("OK authenticated principal={principal}"));
    c
}

fn command_name(line: &str) -> &str {
    line.split_whitespace().next().unwrap()
}

#[tokio::test]
async fn every_row_refuses_a_principal_lacking_one_of_its_permissions() {
    let broker = start(&table_users());
    for missing in PERMISSIONS {
        let mut c = authenticated(&broker.addr, &all_but(missing)).await;
        for (line, permissions) in ROWS.iter().filter(|(_, p)| p.contains(&missing)) {
            let e = c.error(line).await;
            assert_eq!(
                e.code,
                "NOT_AUTHORIZED_FOR_OPERATION",
                "{line}: {}",
                e.render()
            );
            assert_eq!(e.fields["command"], command_name(line), "{line}");
            assert_eq!(
                e.fields["permission"], missing,
                "{line} needs {permissions:?}"
            );
        }
    }
}

#[tokio::test]
async fn every_row_admits_a_principal_with_exactly_its_permissions() {
    let broker = start(&table_users());
    for (line, _) in ROWS {
        let principal = exactly(ROWS.iter().find(|(l, _)| l == line).unwrap().1);
        let mut c = authenticated(&broker.addr, &principal).await;
        if let Err(e) = c.reply(line).await {
            assert!(
                !DENIALS.contains(&e.code.as_str()),
                "{line} as {principal}: {}",
                e.render()
            );
        }
    }
}

#[tokio::test]
async fn every_protected_command_needs_authentication() {
    let broker = start(&table_users());
    let mut c = Client::plain(&broker.addr).await;
    let others = [
        "JOIN_CLUSTER",
        "LEAVE_CLUSTER",
        "HEARTBEAT_CLUSTER",
        "REPLICA_CATCHUP",
        "REPLICATE_MESSAGE",
        "REPLICATE_SNAPSHOT",
        "LIST_SNAPSHOTS",
        "FETCH_SNAPSHOT",
        "CATCHUP_SNAPSHOTS",
        "RAFT_APPLY",
        "INTERNAL_BATCH",
    ];
    let lines = ROWS.iter().map(|(l, _)| *l).chain(others);
    for line in lines {
        let e = c.error(line).await;
        assert_eq!(e.code, "authentication_required", "{line}: {}", e.render());
        assert_eq!(e.fields["command"], command_name(line));
    }
    // A batch PUBLISH carries no fields: it needs connection AUTH.
    let e = c.publish_batch("t", "x").await.unwrap_err();
    assert_eq!(e.code, "authentication_required");
    assert_eq!(e.fields["command"], "PUBLISH");
    // AUTH, HELP and EXIT need nothing.
    assert!(c.ok("HELP").await.contains("AUTH"));
    assert_eq!(c.ok("EXIT").await, "OK");
}

#[tokio::test]
async fn cluster_and_internal_commands_are_refused_as_before_once_authenticated() {
    let broker = start(&table_users());
    let mut c = authenticated(&broker.addr, "admin").await;
    assert_eq!(
        c.error("CLUSTER_STATUS").await.code,
        "distribution_not_enabled"
    );
    assert_eq!(
        c.error("JOIN_CLUSTER").await.code,
        "distribution_not_enabled"
    );
    assert_eq!(
        c.error("REPLICATE_MESSAGE topic=t").await.code,
        "internal_command_unauthorized"
    );
}

#[tokio::test]
async fn batch_publish_is_authorized_like_text_publish() {
    let broker = start(&table_users());
    let mut admin = authenticated(&broker.addr, "admin").await;
    admin.ok("CREATE topic=t partitions=1").await;
    let mut c = authenticated(&broker.addr, &all_but("topic.write")).await;
    let e = c.publish_batch("t", "x").await.unwrap_err();
    assert_eq!(e.code, "NOT_AUTHORIZED_FOR_OPERATION");
    assert_eq!(e.fields["permission"], "topic.write");
    let mut w = authenticated(&broker.addr, &exactly(&["topic.write"])).await;
    w.publish_batch("t", "x").await.expect("batch publish");
}

/// Users for the ACL tests: alice reads, bob writes, carol neither; all
/// three hold every coarse permission so only the topic policy decides.
fn acl_users() -> String {
    let all: &[&str] = &["*"];
    users_toml(&[
        ("admin", "admin", all),
        ("alice", "alice", all),
        ("bob", "bob", all),
        ("carol", "carol", all),
    ])
}

const CONSUME: &str = "CONSUME partition=0 offset=0 member=m";

async fn read(c: &mut Client, topic: &str) -> Result<String, cursus_wire::ErrorPayload> {
    c.reply(&format!("{CONSUME} topic={topic}")).await
}

async fn write(c: &mut Client, topic: &str) -> Result<String, cursus_wire::ErrorPayload> {
    c.reply(&format!(
        "PUBLISH topic={topic} acks=1 producerId=p message=v"
    ))
    .await
}

fn denied(result: Result<String, cursus_wire::ErrorPayload>, topic: &str, operation: &str) {
    let e = result.expect_err("denied");
    assert_eq!(e.code, "NOT_AUTHORIZED_FOR_TOPIC", "{}", e.render());
    assert_eq!(e.class, cursus_wire::ErrorClass::Authorization);
    assert_eq!(e.fields["topic"], topic);
    assert_eq!(e.fields["operation"], operation);
}

#[tokio::test]
async fn acl_topics_admit_the_named_principals_and_star() {
    let broker = start(&acl_users());
    let mut admin = authenticated(&broker.addr, "admin").await;
    admin
        .ok("CREATE topic=named partitions=1 auth_policy=acl read_acl=alice write_acl=bob")
        .await;
    admin
        .ok("CREATE topic=everyone partitions=1 auth_policy=acl read_acl=* write_acl=*")
        .await;
    // DESCRIBE echoes the lists.
    let description = admin.ok("DESCRIBE topic=named").await;
    assert!(
        description.contains("\"read_acl\":[\"alice\"]"),
        "{description}"
    );
    assert!(
        description.contains("\"write_acl\":[\"bob\"]"),
        "{description}"
    );

    let mut alice = authenticated(&broker.addr, "alice").await;
    let mut bob = authenticated(&broker.addr, "bob").await;
    let mut carol = authenticated(&broker.addr, "carol").await;
    write(&mut bob, "named").await.expect("bob writes");
    read(&mut alice, "named").await.expect("alice reads");
    denied(write(&mut alice, "named").await, "named", "write");
    denied(read(&mut bob, "named").await, "named", "read");
    denied(read(&mut carol, "named").await, "named", "read");
    denied(write(&mut carol, "named").await, "named", "write");
    // A batch PUBLISH is checked against the topic of its header.
    denied(alice.publish_batch("named", "x").await, "named", "write");
    bob.publish_batch("named", "x").await.expect("bob's batch");
    // `*` is any authenticated principal.
    write(&mut carol, "everyone").await.expect("carol writes");
    read(&mut carol, "everyone").await.expect("carol reads");
    // Authorization comes before validation: carol learns nothing about
    // her request's mistakes...
    denied(carol.reply("CONSUME topic=named").await, "named", "read");
    // ...but a missing topic stays the handler's topic_not_found.
    assert_eq!(
        read(&mut carol, "absent").await.unwrap_err().code,
        "topic_not_found"
    );
}

#[tokio::test]
async fn deny_read_and_deny_write_refuse_everyone_with_sasl_on() {
    let broker = start(&acl_users());
    let mut admin = authenticated(&broker.addr, "admin").await;
    admin
        .ok("CREATE topic=locked partitions=1 auth_policy=deny_write")
        .await;
    admin
        .ok("CREATE topic=sealed partitions=1 auth_policy=deny_read")
        .await;
    denied(write(&mut admin, "locked").await, "locked", "write");
    read(&mut admin, "locked").await.expect("reads allowed");
    write(&mut admin, "sealed").await.expect("writes allowed");
    denied(read(&mut admin, "sealed").await, "sealed", "read");
    // Event-sourcing reads and writes follow the same policy.
    admin
        .ok("CREATE topic=es partitions=1 event_sourcing=true auth_policy=deny_write")
        .await;
    let e = admin
        .error("APPEND_STREAM topic=es key=k version=1 message=m")
        .await;
    assert_eq!(e.code, "NOT_AUTHORIZED_FOR_TOPIC", "{}", e.render());
}

#[tokio::test]
async fn topic_policies_apply_with_sasl_off() {
    let broker = start("");
    let mut c = Client::plain(&broker.addr).await;
    c.ok("CREATE topic=acl partitions=1 auth_policy=acl read_acl=* write_acl=*")
        .await;
    c.ok("CREATE topic=locked partitions=1 auth_policy=deny_write")
        .await;
    c.ok("CREATE topic=sealed partitions=1 auth_policy=deny_read")
        .await;
    // No principal: an acl topic refuses all, even with `*`.
    denied(write(&mut c, "acl").await, "acl", "write");
    denied(read(&mut c, "acl").await, "acl", "read");
    denied(write(&mut c, "locked").await, "locked", "write");
    denied(read(&mut c, "sealed").await, "sealed", "read");
    write(&mut c, "sealed").await.expect("write to deny_read");
    read(&mut c, "locked").await.expect("read from deny_write");
    // Coarse permissions do not apply with SASL off.
    c.ok("LIST").await;
}
