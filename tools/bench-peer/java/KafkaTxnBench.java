// The Kafka side of the transactional rows of `make bench-peer`, against
// the Rust engine (core/examples/bench_txn.rs, which does the same): the
// Apache Kafka Java client (kafka-clients 4.1.1), 100-byte records, 4
// partitions, acks=all and enable.idempotence=true (transactions require
// both), linger 5 ms, batches of up to 256 KiB. Prints one JSON object.
//
//   java -cp <classes>:<kafka-lib>/* KafkaTxnBench produce|eos BOOTSTRAP TOPIC RECORDS PER_TXN
//
// produce creates TOPIC, then a transactional producer (initTransactions
// untimed) writes RECORDS records round-robin over the partitions, PER_TXN
// per transaction (beginTransaction, send ×PER_TXN, commitTransaction):
// records/s from the first beginTransaction to the last commit. eos fills
// TOPIC-in with a plain producer (untimed), then runs the exactly-once loop:
// a read_committed group member consumes, each record is transformed (its
// bytes reversed) and sent to TOPIC-out on the same partition, and the
// consumed offsets go into the transaction (sendOffsetsToTransaction);
// exactly PER_TXN records per transaction (what a poll returns beyond that
// waits for the next one). Records/s from the first record consumed to the
// last transaction committed.

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaTxnBench {
  /** How long the loop may take before it is called a failure. */
  private static final long LOOP_LIMIT_NS = 600_000_000_000L;

  private KafkaTxnBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: KafkaTxnBench produce|eos BOOTSTRAP TOPIC RECORDS PER_TXN");
      System.exit(2);
    }
    String mode = args[0];
    String bootstrap = args[1];
    String topic = args[2];
    long records = Long.parseLong(args[3]);
    int perTxn = Integer.parseInt(args[4]);
    double[] result;
    switch (mode) {
      case "produce":
        result = produce(bootstrap, topic, records, perTxn);
        break;
      case "eos":
        result = eos(bootstrap, topic, records, perTxn);
        break;
      default:
        System.err.println("mode: produce or eos, not " + mode);
        System.exit(2);
        return;
    }
    System.out.println(String.format(Locale.ROOT,
        "{\"mode\": \"%s\", \"records\": %d, \"per_txn\": %d, \"transactions\": %d, "
            + "\"records_per_s\": %.0f}",
        mode, records, perTxn, (long) result[1], result[0]));
  }

  private static void createTopics(String bootstrap, String... topics) throws Exception {
    Properties a = new Properties();
    a.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(a)) {
      List<NewTopic> news = new java.util.ArrayList<>();
      for (String t : topics) {
        news.add(new NewTopic(t, PeerTiming.PARTITIONS, (short) 1));
      }
      admin.createTopics(news).all().get();
    }
  }

  private static Properties producerProps(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    return p;
  }

  /** A transactional producer, initTransactions done (untimed). */
  private static KafkaProducer<byte[], byte[]> transactional(String bootstrap, String id) {
    Properties p = producerProps(bootstrap);
    p.put("acks", "all");
    p.put("enable.idempotence", "true");
    p.put("transactional.id", id);
    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
    producer.initTransactions();
    return producer;
  }

  /** Transactional produce only: {records/s, transactions}. */
  static double[] produce(String bootstrap, String topic, long records, int perTxn)
      throws Exception {
    createTopics(bootstrap, topic);
    byte[] payload = PeerTiming.payload();
    try (KafkaProducer<byte[], byte[]> producer = transactional(bootstrap, "txn-" + topic)) {
      long start = System.nanoTime();
      long sent = 0, transactions = 0;
      while (sent < records) {
        producer.beginTransaction();
        long n = Math.min(perTxn, records - sent);
        for (long i = sent; i < sent + n; i++) {
          producer.send(new ProducerRecord<>(topic, (int) (i % PeerTiming.PARTITIONS), null, payload));
        }
        producer.commitTransaction(); // flushes; fails if a send of it failed
        sent += n;
        transactions++;
      }
      return new double[] {records / ((System.nanoTime() - start) / 1e9), transactions};
    }
  }

  /** The exactly-once loop: {records/s, transactions}. */
  static double[] eos(String bootstrap, String topic, long records, int perTxn) throws Exception {
    String input = topic + "-in", output = topic + "-out";
    createTopics(bootstrap, input, output);
    fill(bootstrap, input, records);

    Properties c = new Properties();
    c.put("bootstrap.servers", bootstrap);
    c.put("group.id", "g-" + topic);
    c.put("auto.offset.reset", "earliest");
    c.put("enable.auto.commit", "false");
    c.put("isolation.level", "read_committed");
    c.put("max.poll.records", Integer.toString(perTxn));
    c.put("key.deserializer", ByteArrayDeserializer.class.getName());
    c.put("value.deserializer", ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
        KafkaProducer<byte[], byte[]> producer = transactional(bootstrap, "eos-" + topic)) {
      consumer.subscribe(List.of(input));
      ArrayDeque<ConsumerRecord<byte[], byte[]>> pending = new ArrayDeque<>();
      long deadline = System.nanoTime() + LOOP_LIMIT_NS;
      long start = 0, done = 0, transactions = 0;
      while (done < records) {
        long want = Math.min(perTxn, records - done);
        while (pending.size() < want) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("consumed " + (done + pending.size()) + " of " + records);
          }
          int before = pending.size();
          consumer.poll(Duration.ofSeconds(1)).forEach(pending::add);
          if (start == 0 && pending.size() > before) {
            start = System.nanoTime();
          }
        }
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (long i = 0; i < want; i++) {
          ConsumerRecord<byte[], byte[]> r = pending.poll();
          byte[] value = r.value().clone();
          reverse(value);
          producer.send(new ProducerRecord<>(output, r.partition(), null, value));
          offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
        producer.commitTransaction();
        done += want;
        transactions++;
      }
      return new double[] {records / ((System.nanoTime() - start) / 1e9), transactions};
    }
  }

  private static void reverse(byte[] b) {
    for (int i = 0, j = b.length - 1; i < j; i++, j--) {
      byte t = b[i];
      b[i] = b[j];
      b[j] = t;
    }
  }

  /** Fills TOPIC round-robin with a plain producer (acks=1), before the clock starts. */
  private static void fill(String bootstrap, String topic, long records) {
    Properties p = producerProps(bootstrap);
    p.put("acks", "1");
    p.put("enable.idempotence", "false");
    byte[] payload = new byte[PeerTiming.PAYLOAD];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) ('a' + i % 26);
    }
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (long i = 0; i < records; i++) {
        producer.send(new ProducerRecord<>(topic, (int) (i % PeerTiming.PARTITIONS), null, payload));
      }
      producer.flush();
    }
  }
}
