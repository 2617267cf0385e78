//! The admin client and connection layer against a real broker.

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::{ClientConfig, ErrorKind};
use cursus_testkit::TestBroker;
use cursus_wire::{Compression, ErrorClass};

async fn admin(broker: &TestBroker, compression: Compression) -> Admin {
    let mut config = ClientConfig::new(&broker.addr);
    config.compression = compression;
    Admin::connect(config).await.expect("connect")
}

#[tokio::test]
async fn topic_lifecycle_under_every_compression() {
    let broker = TestBroker::start();
    for &c in Compression::ALL {
        let admin = admin(&broker, c).await;
        let name = format!("orders-{}", c.name());
        let info = admin
            .create_topic(&NewTopic::new(&name).partitions(3))
            .await
            .unwrap();
        assert_eq!(info.partitions, 3);
        assert_eq!(info.revision, 1);
        // A no-op patch keeps the revision; growing partitions bumps it.
        assert_eq!(
            admin
                .create_topic(&NewTopic::new(&name))
                .await
                .unwrap()
                .revision,
            1
        );
        let grown = admin
            .create_topic(&NewTopic::new(&name).partitions(4))
            .await
            .unwrap();
        assert_eq!((grown.partitions, grown.revision), (4, 2));
        assert!(admin.list_topics().await.unwrap().contains(&name));
        let md = admin.metadata(&name).await.unwrap();
        assert_eq!(md.leaders.len(), 4);
        assert!(md.leaders.iter().all(|l| l == &broker.addr));
        let offsets = admin.list_offsets(&name, None).await.unwrap();
        assert_eq!(offsets.len(), 4);
        assert!(offsets.iter().all(|o| o.earliest == 0 && o.latest == 0));
        let described = admin.describe_topic(&name).await.unwrap();
        assert_eq!(described.partitions.len(), 4);
        // The definition is typed: the same fields CREATE reports.
        assert_eq!(described.definition.name, name);
        assert_eq!(described.definition.partitions, 4);
        assert_eq!(described.definition.cleanup_policy, "delete");
        let t = admin.truncate_topic(&name, 2).await.unwrap();
        assert_eq!(t.revision, 3);
        assert!(admin.delete_topic(&name, false).await.unwrap().deleted);
        assert!(!admin.delete_topic(&name, true).await.unwrap().deleted);
        admin.close().await;
    }
}

#[tokio::test]
async fn broker_errors_arrive_typed() {
    let broker = TestBroker::start();
    let admin = admin(&broker, Compression::None).await;
    let e = admin.delete_topic("missing", false).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broker);
    assert_eq!(e.code(), "topic_not_found");
    assert_eq!(e.class(), ErrorClass::NotFound);
    assert!(!e.retryable());
    let e = admin
        .create_topic(&NewTopic::new("bad/name"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "invalid_topic_name");
    assert_eq!(e.class(), ErrorClass::Validation);
    // A value with whitespace would be re-parsed differently by the broker
    // (spec 5.5), so the engine refuses it before sending.
    let e = admin
        .create_topic(&NewTopic::new("bad name"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(!admin
        .list_topics()
        .await
        .unwrap()
        .contains(&"bad".to_owned()));
    admin
        .create_topic(&NewTopic::new("t").partitions(1))
        .await
        .unwrap();
    let e = admin.truncate_topic("t", 99).await.unwrap_err();
    assert_eq!(e.class(), ErrorClass::Conflict, "{e}");
    assert!(admin.help().await.unwrap().iter().any(|c| c == "PUBLISH"));
}

#[tokio::test]
async fn closed_admin_fails_cleanly() {
    let broker = TestBroker::start();
    let admin = admin(&broker, Compression::None).await;
    admin.close().await;
    admin.close().await;
    let e = admin.list_topics().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed);
}

#[tokio::test]
async fn unreachable_broker_is_an_io_error() {
    // A port bound but not listening: connecting is refused, and no other
    // test (a broker on port 0) can take the port meanwhile.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    let mut config = ClientConfig::new(addr);
    config.retries = 0;
    let e = Admin::connect(config).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.retryable());
    drop(socket);
}

/// A connection reset during the handshake is an I/O failure (retryable),
/// not a protocol error.
#[tokio::test]
async fn a_reset_during_the_handshake_is_an_io_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resetter = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        // Read the handshake, then close with RST (linger 0).
        let mut buf = [0u8; 64];
        stream.readable().await.unwrap();
        let _ = stream.try_read(&mut buf);
        stream.set_zero_linger().unwrap();
        drop(stream);
    });
    let mut config = ClientConfig::new(addr);
    config.retries = 0;
    let e = Admin::connect(config).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.retryable(), "{e}");
    assert!(e.to_string().contains("failed during the handshake"), "{e}");
    resetter.await.unwrap();
}

#[tokio::test]
async fn pointing_at_the_health_port_says_so() {
    let broker = TestBroker::start();
    let e = Admin::connect(ClientConfig::new(&broker.health_addr))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "not_cursus_wire", "{e}");
    assert!(
        e.message()
            .starts_with("received HTTP, not Cursus Wire v2, from"),
        "{e}"
    );
    assert!(e.message().contains("is this the health port?"), "{e}");
}
