//! Redirects and safe retries, with small in-test peers in front of a real
//! broker: a fake broker that answers every request with a routing error,
//! and a proxy that drops the connection before a PUBLISH reply or fences
//! a group request.

use bytes::Bytes;
use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::client::{Cluster, Idempotence, Lane};
use cursus::consumer::{Consumer, Subscription};
use cursus::producer::{Producer, ProducerRecord};
use cursus::{ClientConfig, ConsumerConfig, ProducerConfig};
use cursus_testkit::{eventually_async, TestBroker};
use cursus_wire::{
    Batch, Command, CommandPayload, ErrorPayload, Frame, FrameCodec, Kind, NegotiationRequest,
    Status,
};
use futures_util::{SinkExt, StreamExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::Framed;

/// Accepts the handshake, then answers every request with `error`;
/// counts the requests other than EXIT.
async fn redirecting_broker(error: ErrorPayload) -> (String, Arc<AtomicUsize>) {
    let (addr, served, _) = fake_broker(error).await;
    (addr, served)
}

/// [`redirecting_broker`], also counting the EXITs it receives.
async fn fake_broker(error: ErrorPayload) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let served = Arc::new(AtomicUsize::new(0));
    let exits = Arc::new(AtomicUsize::new(0));
    let (count, exit_count) = (Arc::clone(&served), Arc::clone(&exits));
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let error = error.clone();
            let count = Arc::clone(&count);
            let exit_count = Arc::clone(&exit_count);
            tokio::spawn(async move {
                let mut framed = Framed::new(socket, FrameCodec::new());
                let Some(Ok(hello)) = framed.next().await else {
                    return;
                };
                let chosen = NegotiationRequest::decode(hello.payload)
                    .unwrap()
                    .select()
                    .unwrap();
                framed
                    .send(Frame::negotiation_response(chosen.encode()))
                    .await
                    .unwrap();
                framed.codec_mut().set_compression(chosen.compression);
                while let Some(Ok(req)) = framed.next().await {
                    if req.command == Command::Exit {
                        exit_count.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                    count.fetch_add(1, Ordering::SeqCst);
                    let reply = Frame::response(
                        req.command,
                        req.request_id,
                        Status::Error,
                        error.to_bytes().unwrap(),
                    );
                    if framed.send(reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, served, exits)
}

#[tokio::test]
async fn not_leader_redirect_is_followed() {
    let broker = TestBroker::start();
    let (fake, served) =
        redirecting_broker(ErrorPayload::new("NOT_LEADER").with_field("leader", &broker.addr))
            .await;
    let admin = Admin::connect(ClientConfig::new(&fake)).await.unwrap();
    admin
        .create_topic(&NewTopic::new("routed").partitions(2))
        .await
        .unwrap();
    assert!(admin
        .list_topics()
        .await
        .unwrap()
        .contains(&"routed".to_owned()));
    assert!(
        served.load(Ordering::SeqCst) >= 2,
        "the fake broker saw the requests first"
    );
}

#[tokio::test]
async fn not_coordinator_redirect_is_followed() {
    let broker = TestBroker::start();
    let (host, port) = broker.addr.rsplit_once(':').unwrap();
    let (fake, _) = redirecting_broker(
        ErrorPayload::new("NOT_COORDINATOR")
            .with_field("host", host)
            .with_field("port", port),
    )
    .await;
    let cluster = Cluster::new(ClientConfig::new(&fake)).unwrap();
    let reply = cluster
        .request(
            None,
            Lane::CONTROL,
            Command::ListGroups,
            &CommandPayload::new(),
            Idempotence::Safe,
        )
        .await
        .unwrap();
    assert!(reply.starts_with(b"OK"));
}

#[tokio::test]
async fn fencing_errors_are_returned_not_retried() {
    let (fake, served) =
        redirecting_broker(ErrorPayload::new("GEN_MISMATCH").with_field("current", 3)).await;
    let cluster = Cluster::new(ClientConfig::new(&fake)).unwrap();
    let e = cluster
        .request(
            None,
            Lane::CONTROL,
            Command::Heartbeat,
            &CommandPayload::new().field("group", "g"),
            Idempotence::Safe,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "GEN_MISMATCH");
    assert_eq!(served.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn availability_errors_back_off_then_give_up() {
    let (fake, served) = redirecting_broker(ErrorPayload::new("coordinator_not_available")).await;
    let mut config = ClientConfig::new(&fake);
    config.retries = 3;
    config.retry_backoff = Duration::from_millis(1);
    config.retry_backoff_max = Duration::from_millis(5);
    let cluster = Cluster::new(config).unwrap();
    let e = cluster
        .request(
            None,
            Lane::CONTROL,
            Command::List,
            &CommandPayload::new(),
            Idempotence::Safe,
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "coordinator_not_available");
    assert_eq!(
        served.load(Ordering::SeqCst),
        4,
        "one try plus three retries"
    );
}

#[tokio::test]
async fn request_timeout_is_retried_when_the_broker_says_it_was_not_applied() {
    let cluster_for = |fake: &str| {
        let mut config = ClientConfig::new(fake);
        config.retries = 2;
        config.retry_backoff = Duration::from_millis(1);
        config.retry_backoff_max = Duration::from_millis(5);
        Cluster::new(config).unwrap()
    };
    let create = CommandPayload::new().field("topic", "t");
    for (outcome, attempts) in [("not_accepted", 3), ("unknown", 1)] {
        let (fake, served) =
            redirecting_broker(ErrorPayload::new("request_timeout").with_field("outcome", outcome))
                .await;
        let e = cluster_for(&fake)
            .request(
                None,
                Lane::CONTROL,
                Command::Create,
                &create,
                Idempotence::Unsafe,
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), "request_timeout");
        assert_eq!(served.load(Ordering::SeqCst), attempts, "outcome={outcome}");
    }
}

#[tokio::test]
async fn a_graceful_close_sends_exit() {
    let (fake, served, exits) = fake_broker(ErrorPayload::new("broker_error")).await;
    let cluster = Cluster::new(ClientConfig::new(&fake)).unwrap();
    cluster.any_broker(Lane::CONTROL).await.unwrap();
    cluster.close().await;
    eventually_async!(Duration::from_secs(5), "the EXIT", async {
        let n = exits.load(Ordering::SeqCst);
        (n == 1).then_some(()).ok_or(n)
    });
    assert_eq!(served.load(Ordering::SeqCst), 0);
}

/// What an [`intercepting_proxy`] does with one frame.
enum Intercept {
    /// Pass it on.
    Forward,
    /// Drop both sockets: the frame is lost.
    Cut,
    /// A request only: answer it with this error instead of forwarding it.
    Answer(ErrorPayload),
}

/// Forwards frames between clients and `upstream`, asking `requests` about
/// every request and `replies` about every reply.
fn intercepting_proxy(
    listener: TcpListener,
    upstream: String,
    requests: impl Fn(&Frame) -> Intercept + Send + Sync + 'static,
    replies: impl Fn(&Frame) -> Intercept + Send + Sync + 'static,
) {
    let hooks = Arc::new((requests, replies));
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = upstream.clone();
            let hooks = Arc::clone(&hooks);
            tokio::spawn(async move {
                let server = TcpStream::connect(&upstream).await.unwrap();
                let mut client = Framed::new(client, FrameCodec::new());
                let mut server = Framed::new(server, FrameCodec::new());
                loop {
                    tokio::select! {
                        f = client.next() => {
                            let Some(Ok(f)) = f else { return };
                            if f.kind == Kind::NegotiationRequest {
                                server.send(f).await.unwrap();
                                continue;
                            }
                            match (hooks.0)(&f) {
                                Intercept::Forward => server.send(f).await.unwrap(),
                                Intercept::Cut => return,
                                Intercept::Answer(e) => {
                                    let reply = Frame::response(f.command, f.request_id, Status::Error, e.to_bytes().unwrap());
                                    client.send(reply).await.unwrap();
                                }
                            }
                        }
                        f = server.next() => {
                            let Some(Ok(f)) = f else { return };
                            if f.kind == Kind::NegotiationResponse {
                                let c = cursus_wire::NegotiationResponse::decode(f.payload.clone()).unwrap().compression;
                                client.send(f).await.unwrap();
                                client.codec_mut().set_compression(c);
                                server.codec_mut().set_compression(c);
                                continue;
                            }
                            match (hooks.1)(&f) {
                                Intercept::Cut => return,
                                _ => client.send(f).await.unwrap(),
                            }
                        }
                    }
                }
            });
        }
    });
}

/// Forwards between clients and `upstream`, except that the first PUBLISH
/// reply is swallowed and the client connection dropped: the broker
/// appended the batch, the client never hears so.
fn reply_dropping_proxy(listener: TcpListener, upstream: String) -> Arc<AtomicUsize> {
    let dropped = Arc::new(AtomicUsize::new(0));
    let flag = Arc::clone(&dropped);
    intercepting_proxy(
        listener,
        upstream,
        |_| Intercept::Forward,
        move |f| {
            if f.command == Command::Publish && flag.fetch_add(1, Ordering::SeqCst) == 0 {
                Intercept::Cut
            } else {
                Intercept::Forward
            }
        },
    );
    dropped
}

#[tokio::test]
async fn a_poll_whose_rejoin_is_fenced_rejoins_again_instead_of_failing() {
    // The broker advertises the proxy, so the group coordinator is the
    // proxy, and the proxy answers the first SYNC_GROUP with
    // member_not_found, as a coordinator that moved between JOIN and SYNC
    // does. The member that JOIN created stays behind on this (unmoved)
    // coordinator until its short session expires; then the rejoined
    // member gets the partition.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap().to_string();
    let broker = TestBroker::start_with_config(&format!(
        "advertised_addr = \"{proxy}\"\ngroup_session_timeout_ms = 1000\n"
    ));
    let fenced = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&fenced);
    intercepting_proxy(
        listener,
        broker.addr.clone(),
        move |f| {
            if f.command == Command::SyncGroup && count.fetch_add(1, Ordering::SeqCst) == 0 {
                Intercept::Answer(
                    ErrorPayload::new("member_not_found")
                        .with_field("group", "g")
                        .with_field("member", "m"),
                )
            } else {
                Intercept::Forward
            }
        },
        |_| Intercept::Forward,
    );
    let admin = Admin::connect(ClientConfig::new(&proxy)).await.unwrap();
    admin
        .create_topic(&NewTopic::new("fenced").partitions(1))
        .await
        .unwrap();
    let producer = Producer::connect(ProducerConfig::new(&proxy))
        .await
        .unwrap();
    producer
        .send(ProducerRecord::new("fenced", "r0"))
        .await
        .unwrap()
        .await
        .unwrap();
    let mut config = ConsumerConfig::new(&proxy, "g");
    config.set("auto_offset_reset", "earliest").unwrap();
    config.set("heartbeat_interval_ms", "100").unwrap();
    let consumer = Consumer::connect(config).await.unwrap();
    consumer
        .subscribe(Subscription::Topics(vec!["fenced".into()]))
        .await
        .unwrap();
    let got = eventually_async!(
        Duration::from_secs(20),
        "a record after the fenced SYNC",
        async {
            Some(consumer.poll(Duration::from_secs(1)).await.unwrap()).filter(|got| !got.is_empty())
        }
    );
    // The first SYNC was fenced; later ones (the rejoin, the rebalance
    // when the member left behind expired) went through.
    assert!(fenced.load(Ordering::SeqCst) >= 2, "fenced, then synced");
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], b"r0");
    consumer.close().await.unwrap();
}

#[tokio::test]
async fn idempotent_retry_after_a_lost_reply_leaves_no_duplicate() {
    // The broker advertises the proxy, so the producer's partition leader
    // is the proxy and the lost reply forces a retry.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap().to_string();
    let broker = TestBroker::start_with_config(&format!("advertised_addr = \"{proxy}\"\n"));
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    admin
        .create_topic(&NewTopic::new("exactly-once").partitions(1))
        .await
        .unwrap();
    let dropped = reply_dropping_proxy(listener, broker.addr.clone());
    let mut config = ProducerConfig::new(&proxy);
    config.set("enable_idempotence", "true").unwrap();
    config.set("retry_backoff_ms", "10").unwrap();
    let producer = Producer::connect(config).await.unwrap();
    let mut deliveries = Vec::new();
    for i in 0..5 {
        deliveries.push(
            producer
                .send(ProducerRecord::new("exactly-once", format!("r{i}")))
                .await
                .unwrap(),
        );
    }
    producer.flush(Some(Duration::from_secs(30))).await.unwrap();
    for d in deliveries {
        d.await.unwrap();
    }
    assert!(dropped.load(Ordering::SeqCst) >= 1, "a reply was dropped");
    let payload = CommandPayload::new()
        .field("topic", "exactly-once")
        .field("partition", 0)
        .field("offset", 0)
        .field("member", "m")
        .field("group", "check");
    let cluster = Cluster::new(ClientConfig::new(&broker.addr)).unwrap();
    let reply = cluster
        .request(
            None,
            Lane::CONTROL,
            Command::Consume,
            &payload,
            Idempotence::Safe,
        )
        .await
        .unwrap();
    let records = Batch::decode(reply).unwrap().records;
    let payloads: Vec<Bytes> = records.iter().map(|r| r.payload.clone()).collect();
    assert_eq!(
        payloads,
        (0..5)
            .map(|i| Bytes::from(format!("r{i}")))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn non_idempotent_publish_is_not_repeated_after_a_lost_reply() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap().to_string();
    let broker = TestBroker::start_with_config(&format!("advertised_addr = \"{proxy}\"\n"));
    let admin = Admin::connect(ClientConfig::new(&broker.addr))
        .await
        .unwrap();
    admin
        .create_topic(&NewTopic::new("at-most-once").partitions(1))
        .await
        .unwrap();
    reply_dropping_proxy(listener, broker.addr.clone());
    let producer = Producer::connect(ProducerConfig::new(&proxy))
        .await
        .unwrap();
    let delivery = producer
        .send(ProducerRecord::new("at-most-once", "once"))
        .await
        .unwrap();
    let e = delivery.await.unwrap_err();
    assert_eq!(e.kind(), cursus::ErrorKind::Io, "{e}");
    // The outcome was unknown, so the engine reported it instead of
    // repeating it: the broker holds exactly one copy.
    let offsets = admin.list_offsets("at-most-once", Some(0)).await.unwrap();
    assert_eq!(offsets[0].latest, 1);
}
