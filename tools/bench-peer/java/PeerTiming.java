// The timing both Java sides of `make bench-peer` share (KafkaBench: the
// Kafka Java client; CursusBench: our jar), so that they measure alike.

import java.util.Locale;

final class PeerTiming {
  static final int PARTITIONS = 4;
  static final int PAYLOAD = 100;
  /** Sends of the untimed pass that warms the JIT before the per-call figure. */
  static final long CALLS_WARMUP = 100_000;
  /** How long a consume may take before it is called a failure. */
  static final long CONSUME_LIMIT_NS = 300_000_000_000L;

  private PeerTiming() {}

  /** Queues record {@code i} (partition {@code i % PARTITIONS}). */
  interface Send {
    void send(long i) throws Exception;
  }

  /** Waits until every record queued is acknowledged. */
  interface Flush {
    void flush() throws Exception;
  }

  /** One poll (a second at most); the number of records it returned. */
  interface Poll {
    int poll() throws Exception;
  }

  /** A payload of 100 bytes. */
  static byte[] payload() {
    byte[] payload = new byte[PAYLOAD];
    java.util.Arrays.fill(payload, (byte) 'x');
    return payload;
  }

  /** Records/s from the first send to the end of the flush: a cold producer, no send before. */
  static double produce(long records, Send send, Flush flush) throws Exception {
    long start = System.nanoTime();
    for (long i = 0; i < records; i++) {
      send.send(i);
    }
    flush.flush();
    return records / ((System.nanoTime() - start) / 1e9);
  }

  /**
   * µs per send call, queueing only: an untimed pass of up to {@link #CALLS_WARMUP} sends (JIT
   * compiled, connections and metadata warm) and its flush, then {@code records} timed calls; their
   * flush is not timed.
   */
  static double perCallUs(long records, Send send, Flush flush) throws Exception {
    for (long i = 0, warm = Math.min(records, CALLS_WARMUP); i < warm; i++) {
      send.send(i);
    }
    flush.flush();
    long start = System.nanoTime();
    for (long i = 0; i < records; i++) {
      send.send(i);
    }
    double us = (System.nanoTime() - start) / 1e3 / records;
    flush.flush();
    return us;
  }

  /** Records/s of one group member, from the first record received to the last. */
  static double consume(long records, Poll poll) throws Exception {
    long got = 0, first = 0, start = 0;
    long deadline = System.nanoTime() + CONSUME_LIMIT_NS;
    while (got < records && System.nanoTime() < deadline) {
      int n = poll.poll();
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

  /** A side's produce: records/s, or with {@code calls} µs per send call. */
  interface Produce {
    double run(String bootstrap, String topic, long records, boolean calls) throws Exception;
  }

  /** A side's consume: records/s. */
  interface Consume {
    double run(String bootstrap, String topic, long records) throws Exception;
  }

  /**
   * A side's entry point: {@code produce|consume|calls BOOTSTRAP TOPIC N}; prints one JSON line
   * (records/s, or µs per call for calls).
   */
  static void main(String[] args, Produce produce, Consume consume) throws Exception {
    String mode = args[0];
    String bootstrap = args[1];
    String topic = args[2];
    long records = Long.parseLong(args[3]);
    double figure = switch (mode) {
      case "produce" -> produce.run(bootstrap, topic, records, false);
      case "calls" -> produce.run(bootstrap, topic, records, true);
      case "consume" -> consume.run(bootstrap, topic, records);
      default -> throw new IllegalArgumentException("mode: produce, consume or calls, not " + mode);
    };
    String key = mode.equals("calls") ? "per_call_us" : "records_per_s";
    System.out.printf(Locale.ROOT, "{\"mode\": \"%s\", \"records\": %d, \"%s\": %.3f}%n",
        mode, records, key, figure);
  }
}
