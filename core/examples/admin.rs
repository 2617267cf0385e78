//! Creates a topic, lists topics and prints a topic's offsets.
//!
//! ```sh
//! cargo run -p cursus --example admin -- 127.0.0.1:9000 orders
//! ```

use cursus::admin::Admin;
use cursus::admin::NewTopic;
use cursus::ClientConfig;

#[tokio::main]
async fn main() -> cursus::Result<()> {
    let mut args = std::env::args().skip(1);
    let broker = args.next().unwrap_or_else(|| "127.0.0.1:9000".into());
    let topic = args.next().unwrap_or_else(|| "orders".into());
    let admin = Admin::connect(ClientConfig::new(broker)).await?;
    let info = admin
        .create_topic(&NewTopic::new(&topic).partitions(3))
        .await?;
    println!(
        "topic {} has {} partitions (revision {})",
        info.name, info.partitions, info.revision
    );
    println!("topics: {}", admin.list_topics().await?.join(", "));
    for o in admin.list_offsets(&topic, None).await? {
        println!(
            "  partition {}: earliest {} latest {}",
            o.partition, o.earliest, o.latest
        );
    }
    admin.close().await;
    Ok(())
}
