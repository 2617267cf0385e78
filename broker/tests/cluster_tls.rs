//! Redirects in a cluster whose members also have a TLS listener: a client
//! that came in over TLS is pointed at the TLS listener of the broker that
//! serves it, for every redirect (partition data, event sourcing, groups,
//! transactions), never at a plain address.

mod security_common;

use std::collections::BTreeSet;

use cursus_testkit::pki::TestPki;
use cursus_testkit::TestCluster;
use security_common::{toml_path, Client, TlsClient};

/// The `host:port` a routing error names (`leader=` or `host=` + `port=`).
fn named_addr(e: &cursus_wire::ErrorPayload) -> String {
    match e.fields.get("leader") {
        Some(leader) => leader.clone(),
        None => format!("{}:{}", e.fields["host"], e.fields["port"]),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_client_is_redirected_to_tls_listeners() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let toml = format!(
        "tls_listen = \"127.0.0.1:0\"\ntls_cert_file = {}\ntls_key_file = {}\n",
        toml_path(&pki.server_cert),
        toml_path(&pki.server_key)
    );
    let cluster = TestCluster::start_with_config(3, &toml);
    let tls: Vec<String> = cluster
        .members
        .iter()
        .map(|m| m.tls_addr.clone().expect("banner has tls_addr="))
        .collect();
    let tls_set: BTreeSet<&str> = tls.iter().map(String::as_str).collect();
    let trust = TlsClient::trusting(&pki.ca);
    let mut first = Client::tls(&tls[0], &trust).await.unwrap();
    first
        .ok("CREATE topic=t partitions=3 replication_factor=3")
        .await;
    first
        .ok("CREATE topic=es partitions=3 replication_factor=3 event_sourcing=true")
        .await;

    // Every redirect one TLS client meets on each broker names a TLS
    // listener; each kind of redirect is met at least once.
    let mut met = BTreeSet::new();
    for addr in &tls {
        let mut c = Client::tls(addr, &trust).await.unwrap();
        let mut lines: Vec<(&str, String)> = Vec::new();
        for p in 0..3 {
            lines.push((
                "CONSUME",
                format!("CONSUME topic=t partition={p} offset=0 member=m"),
            ));
            lines.push((
                "STREAM_VERSION",
                format!("STREAM_VERSION topic=es key=k{p}"),
            ));
            lines.push((
                "FETCH_OFFSET",
                format!("FETCH_OFFSET topic=t partition={p} group=g{p}"),
            ));
            lines.push((
                "INIT_PRODUCER_ID",
                format!("INIT_PRODUCER_ID transactional_id=tx{p}"),
            ));
        }
        for (kind, line) in &lines {
            // Served here (or refused for another reason, e.g. an unknown
            // group on its coordinator): no redirect to check.
            let Err(e) = c.reply(line).await else {
                continue;
            };
            if e.code == "NOT_LEADER" || e.code == "NOT_COORDINATOR" {
                let named = named_addr(&e);
                assert!(
                    tls_set.contains(named.as_str()),
                    "{line} over TLS redirected to {named}, not a TLS listener ({tls:?})"
                );
                assert_ne!(&named, addr, "{line}: redirected to itself");
                met.insert(*kind);
            }
        }
    }
    assert_eq!(
        met.into_iter().collect::<Vec<_>>(),
        [
            "CONSUME",
            "FETCH_OFFSET",
            "INIT_PRODUCER_ID",
            "STREAM_VERSION"
        ],
        "every kind of redirect was exercised"
    );
}
