import io.cursus.ClientConfig;
import io.cursus.ConsumerConfig;
import io.cursus.ConsumerRecord;
import io.cursus.CursusAdmin;
import io.cursus.CursusConsumer;
import io.cursus.CursusProducer;
import io.cursus.NewTopic;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import io.cursus.RecordMetadata;
import io.cursus.Statistics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Cursus quickstart for Java: create a topic, produce 1,000 records, read them back
 * through a consumer group and commit.
 *
 * <pre>
 * javac -cp cursus-0.1.0.jar Quickstart.java
 * java -cp cursus-0.1.0.jar:. Quickstart 127.0.0.1:9000
 * </pre>
 */
public final class Quickstart {
    private static final String TOPIC = "quickstart-java";
    private static final String GROUP = "quickstart-java";
    private static final int RECORDS = 1000;

    public static void main(String[] args) {
        String bootstrap = args.length > 0 ? args[0] : "127.0.0.1:9000";
        try {
            long started = System.nanoTime();
            int produced = produce(bootstrap);
            int consumed = consume(bootstrap);
            long elapsedMs = (System.nanoTime() - started) / 1_000_000;
            System.out.printf("java: produced %d, consumed %d through group %s, committed (%d ms)%n",
                    produced, consumed, GROUP, elapsedMs);
        } catch (RuntimeException e) {
            // SDK errors are CursusExceptions (code, class, retryable, fields); a failed
            // delivery arrives wrapped in the future's CompletionException.
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            System.err.println("quickstart-java failed: " + cause);
            System.exit(1);
        }
    }

    /** Creates the topic and sends the records; returns how many were acknowledged. */
    static int produce(String bootstrap) {
        try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(bootstrap))) {
            // Creating a topic that already exists is not an error (the settings are applied).
            admin.createTopic(NewTopic.named(TOPIC).partitions(3));
        }

        ProducerConfig config = ProducerConfig.builder().bootstrapServers(bootstrap).acks("all").build();
        try (CursusProducer producer = new CursusProducer(config)) {
            List<CompletableFuture<RecordMetadata>> acks = new ArrayList<>(RECORDS);
            for (int i = 0; i < RECORDS; i++) {
                acks.add(producer.send(ProducerRecord.of(TOPIC, "key-" + i, "java record " + i)));
            }
            producer.flush();
            for (CompletableFuture<RecordMetadata> ack : acks) {
                ack.join(); // throws if this record was not delivered
            }
            return acks.size();
        }
    }

    /** Reads the records through the consumer group, then commits; returns how many. */
    static int consume(String bootstrap) {
        ConsumerConfig config = ConsumerConfig.builder()
                .bootstrapServers(bootstrap)
                .groupId(GROUP)
                .autoOffsetReset("earliest")
                .build();
        try (CursusConsumer consumer = new CursusConsumer(config)) {
            consumer.subscribe(List.of(TOPIC));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            int consumed = 0;
            while (consumed < RECORDS) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("received only " + consumed + " of " + RECORDS
                            + " records within 60 s");
                }
                List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(500));
                consumed += records.size();
            }
            consumer.commitSync();
            Statistics stats = consumer.statistics(); // lag per assigned partition (0: all read)
            System.out.printf("java: lag %d over %d partitions, %d records received%n",
                    stats.totalLag(), stats.partitions().size(), stats.recordsReceived());
            return consumed;
        }
    }
}
