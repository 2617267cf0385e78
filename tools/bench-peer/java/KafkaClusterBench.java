// The Kafka side of the cluster rows of `make bench-peer`: the Apache Kafka
// Java client (kafka-clients 4.1.1) producing N records of 100 bytes with
// acks=all to a three-broker cluster, on a topic of 4 partitions, replication
// factor 3, min.insync.replicas 2; linger 5 ms, batches of up to 256 KiB,
// partitions written round-robin, idempotence off (as our engine's producer
// there). Measured as core/examples/bench_cluster.rs measures ours: one
// record per partition sent and awaited first (leaders known), then N records
// with at most 50,000 unacknowledged (as core/benches/support/workload.rs),
// records/s from the first send to the last acknowledgement and each record's
// send→ack time; then records one at a time, each awaited before the next (up
// to 1,000 or 2 s). Prints one JSON object.
//
//   java -cp <classes>:<kafka-lib>/* KafkaClusterBench BOOTSTRAP TOPIC N

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaClusterBench {
  /** Unacknowledged records at most, as the engine's workload loop. */
  static final int IN_FLIGHT = 50_000;
  /** Records sent one at a time: at most this many, for at most SINGLES_NS. */
  static final int SINGLES = 1_000;
  static final long SINGLES_NS = 2_000_000_000L;

  private KafkaClusterBench() {}

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    int records = Integer.parseInt(args[2]);
    Properties a = new Properties();
    a.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(a)) {
      NewTopic t = new NewTopic(topic, PeerTiming.PARTITIONS, (short) 3)
          .configs(Map.of("min.insync.replicas", "2"));
      admin.createTopics(List.of(t)).all().get();
    }
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("acks", "all");
    p.put("linger.ms", "5");
    p.put("batch.size", "262144");
    p.put("enable.idempotence", "false");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    byte[] payload = PeerTiming.payload();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int i = 0; i < PeerTiming.PARTITIONS; i++) {
        producer.send(new ProducerRecord<>(topic, i, null, payload)).get();
      }

      long[] acks = new long[records];
      Semaphore room = new Semaphore(IN_FLIGHT);
      CountDownLatch done = new CountDownLatch(records);
      AtomicReference<Exception> failed = new AtomicReference<>();
      long start = System.nanoTime();
      for (int i = 0; i < records; i++) {
        room.acquire();
        int at = i;
        long sent = System.nanoTime();
        producer.send(new ProducerRecord<>(topic, i % PeerTiming.PARTITIONS, null, payload),
            (meta, e) -> {
              acks[at] = System.nanoTime() - sent;
              if (e != null) {
                failed.compareAndSet(null, e);
              }
              room.release();
              done.countDown();
            });
      }
      producer.flush();
      done.await();
      double rate = records / ((System.nanoTime() - start) / 1e9);
      if (failed.get() != null) {
        throw failed.get();
      }

      long[] single = new long[SINGLES];
      int count = 0;
      long singlesStart = System.nanoTime();
      while (count < SINGLES && System.nanoTime() - singlesStart < SINGLES_NS) {
        long sent = System.nanoTime();
        producer.send(new ProducerRecord<>(topic, count % PeerTiming.PARTITIONS, null, payload))
            .get();
        single[count++] = System.nanoTime() - sent;
      }
      single = Arrays.copyOf(single, count);
      Arrays.sort(acks);
      Arrays.sort(single);
      System.out.printf(Locale.ROOT,
          "{\"records\": %d, \"records_per_s\": %.0f, \"ack_p50_ms\": %.3f, \"ack_p99_ms\": %.3f, "
              + "\"one_p50_ms\": %.3f, \"one_p99_ms\": %.3f, \"one_count\": %d}%n",
          records, rate, ms(acks, 0.50), ms(acks, 0.99), ms(single, 0.50), ms(single, 0.99), count);
    }
  }

  /** The q quantile of sorted ns values in ms, indexed as the engine's workload loop does. */
  static double ms(long[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = Math.min((int) (sorted.length * q), sorted.length - 1);
    return sorted[i] / 1e6;
  }
}
