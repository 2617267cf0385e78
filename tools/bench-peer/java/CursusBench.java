// Our side of the Java rows of `make bench-peer`: the jar (bindings-java),
// the same workloads as KafkaBench gives the Kafka Java client: 100-byte
// records, acks=1, linger 5 ms, batches of up to 256 KiB, 4 partitions
// written round-robin. Timing in PeerTiming. Prints one JSON object.
//
//   java -cp <classes>:<cursus jar> CursusBench produce|consume|calls BOOTSTRAP TOPIC N
//
// produce creates TOPIC, then a cold producer sends N records: records/s
// until every one is acknowledged. consume: records/s of one group member.
// calls creates TOPIC and gives µs per send() call, the JIT warmed, with
// room in buffer_memory for every record so that no call waits for space.

import io.cursus.ClientConfig;
import io.cursus.ConsumerConfig;
import io.cursus.CursusAdmin;
import io.cursus.CursusConsumer;
import io.cursus.CursusProducer;
import io.cursus.NewTopic;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import java.time.Duration;
import java.util.List;

public final class CursusBench {
  private CursusBench() {}

  public static void main(String[] args) throws Exception {
    PeerTiming.main(args, CursusBench::produce, CursusBench::consume);
  }

  static double produce(String bootstrap, String topic, long records, boolean calls) throws Exception {
    try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(bootstrap))) {
      admin.createTopic(NewTopic.named(topic).partitions(PeerTiming.PARTITIONS));
    }
    ProducerConfig.Builder config = ProducerConfig.builder().bootstrapServers(bootstrap).acks("1")
        .lingerMs(5).batchSize(262144);
    if (calls) {
      config.bufferMemory(Math.min(64L * 1024 * 1024 + records * 256L, 0xFFFF_FFFFL));
    }
    byte[] payload = PeerTiming.payload();
    try (CursusProducer producer = new CursusProducer(config.build())) {
      PeerTiming.Send send = i -> producer.send(
          new ProducerRecord(topic, (int) (i % PeerTiming.PARTITIONS), null, payload, null));
      return calls
          ? PeerTiming.perCallUs(records, send, producer::flush)
          : PeerTiming.produce(records, send, producer::flush);
    }
  }

  static double consume(String bootstrap, String topic, long records) throws Exception {
    ConsumerConfig config = ConsumerConfig.builder().bootstrapServers(bootstrap).groupId("g-" + topic)
        .autoOffsetReset("earliest").maxPollRecords(10_000).fetchMaxRecords(8192).build();
    try (CursusConsumer consumer = new CursusConsumer(config)) {
      consumer.subscribe(List.of(topic));
      return PeerTiming.consume(records, () -> consumer.poll(Duration.ofSeconds(1)).size());
    }
  }
}
