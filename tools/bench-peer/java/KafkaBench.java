// The Kafka side of the Java rows of `make bench-peer` (and of the native
// rows, where the Rust engine is ours): the Apache Kafka Java client
// (kafka-clients 4.1.1), 100-byte records, acks=1, linger 5 ms, batches of
// up to 256 KiB, 4 partitions written round-robin — what CursusBench gives
// our jar and core/examples/bench_native.rs our Rust engine. Timing in
// PeerTiming. Prints one JSON object.
//
//   java -cp <classes>:<kafka-lib>/* KafkaBench produce|consume|calls BOOTSTRAP TOPIC N
//
// produce creates TOPIC, then a cold producer (no send, no metadata request
// before the timed ones) sends N records: records/s until every one is
// acknowledged. consume: records/s of one group member. calls creates TOPIC
// and gives µs per send() call, the JIT warmed (PeerTiming.perCallUs), with
// room in buffer.memory for every record so that no call waits for space.

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaBench {
  private KafkaBench() {}

  public static void main(String[] args) throws Exception {
    PeerTiming.main(args, KafkaBench::produce, KafkaBench::consume);
  }

  static double produce(String bootstrap, String topic, long records, boolean calls) throws Exception {
    Properties a = new Properties();
    a.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(a)) {
      admin.createTopics(List.of(new NewTopic(topic, PeerTiming.PARTITIONS, (short) 1))).all().get();
    }
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "1");
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    p.put("enable.idempotence", "false");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    if (calls) {
      p.put("buffer.memory", Long.toString(64L * 1024 * 1024 + records * 256L));
    }
    byte[] payload = PeerTiming.payload();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      PeerTiming.Send send = i -> producer.send(
          new ProducerRecord<>(topic, (int) (i % PeerTiming.PARTITIONS), null, payload));
      return calls
          ? PeerTiming.perCallUs(records, send, producer::flush)
          : PeerTiming.produce(records, send, producer::flush);
    }
  }

  static double consume(String bootstrap, String topic, long records) throws Exception {
    Properties c = new Properties();
    c.put("bootstrap.servers", bootstrap);
    c.put("group.id", "g-" + topic);
    c.put("auto.offset.reset", "earliest");
    c.put("max.poll.records", "10000");
    c.put("key.deserializer", ByteArrayDeserializer.class.getName());
    c.put("value.deserializer", ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      consumer.subscribe(List.of(topic));
      return PeerTiming.consume(records, () -> consumer.poll(Duration.ofSeconds(1)).count());
    }
  }
}
