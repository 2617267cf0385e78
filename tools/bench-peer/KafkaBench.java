// The native Kafka side of `make bench-peer`: the Apache Kafka Java client
// (kafka-clients 4.1.1) producing or consuming N records of 100 bytes, acks=1,
// linger 5 ms, batches of up to 256 KiB, 4 partitions written round-robin —
// the settings core/examples/bench_native.rs gives our Rust engine.
// Prints one JSON object.
//
//   java -cp <classes>:<kafka-lib>/* KafkaBench produce|consume BOOTSTRAP TOPIC N

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaBench {
  static final int PARTITIONS = 4;
  static final int PAYLOAD = 100;

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String bootstrap = args[1];
    String topic = args[2];
    long records = Long.parseLong(args[3]);
    double rate = mode.equals("produce")
        ? produce(bootstrap, topic, records)
        : consume(bootstrap, topic, records);
    System.out.printf("{\"mode\": \"%s\", \"records\": %d, \"records_per_s\": %.0f}%n",
        mode, records, rate);
  }

  /** Records/s from the first send to the end of the flush (every record acknowledged). */
  static double produce(String bootstrap, String topic, long records) throws Exception {
    Properties a = new Properties();
    a.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(a)) {
      admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
    }
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "1");
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    p.put("enable.idempotence", "false");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    byte[] payload = new byte[PAYLOAD];
    java.util.Arrays.fill(payload, (byte) 'x');
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      producer.partitionsFor(topic); // metadata, warm
      long start = System.nanoTime();
      for (long i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>(topic, (int) (i % PARTITIONS), null, payload));
      }
      producer.flush();
      return records / ((System.nanoTime() - start) / 1e9);
    }
  }

  /** Records/s of one group member, from the first record received to the last. */
  static double consume(String bootstrap, String topic, long records) {
    Properties c = new Properties();
    c.put("bootstrap.servers", bootstrap);
    c.put("group.id", "g-" + topic);
    c.put("auto.offset.reset", "earliest");
    c.put("max.poll.records", "10000");
    c.put("key.deserializer", ByteArrayDeserializer.class.getName());
    c.put("value.deserializer", ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      consumer.subscribe(List.of(topic));
      long got = 0, first = 0, start = 0;
      long deadline = System.nanoTime() + 300_000_000_000L;
      while (got < records && System.nanoTime() < deadline) {
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofSeconds(1));
        int n = batch.count();
        if (n > 0 && got == 0) {
          start = System.nanoTime();
          first = n;
        }
        got += n;
      }
      if (got < records) {
        throw new IllegalStateException("consumed " + got + " of " + records);
      }
      return (records - first) / ((System.nanoTime() - start) / 1e9);
    }
  }
}
