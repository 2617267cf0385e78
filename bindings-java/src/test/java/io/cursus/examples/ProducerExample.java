package io.cursus.examples;

import io.cursus.CursusAdmin;
import io.cursus.ClientConfig;
import io.cursus.CursusProducer;
import io.cursus.NewTopic;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import io.cursus.RecordMetadata;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Creates a topic and sends ten keyed records, printing where each was stored.
 * Run: {@code java -cp cursus.jar:test-classes io.cursus.examples.ProducerExample 127.0.0.1:9000}
 */
public final class ProducerExample {
    private ProducerExample() {}

    /** Entry point: {@code [bootstrap_servers] [topic]}. */
    public static void main(String[] args) throws Exception {
        String servers = args.length > 0 ? args[0] : "127.0.0.1:9000";
        String topic = args.length > 1 ? args[1] : "quickstart";
        try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(servers))) {
            admin.createTopic(NewTopic.named(topic).partitions(3));
        }
        ProducerConfig config = ProducerConfig.builder()
                .bootstrapServers(servers)
                .acks("all")
                .lingerMs(5)
                .compression("lz4")
                .build();
        try (CursusProducer producer = new CursusProducer(config)) {
            List<CompletableFuture<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sent.add(producer.send(ProducerRecord.of(topic, "user-" + (i % 3), "event " + i)));
            }
            producer.flush(Duration.ofSeconds(10));
            for (CompletableFuture<RecordMetadata> f : sent) {
                RecordMetadata md = f.join();
                System.out.printf("sent to %s/%d at offset %d%n", md.topic(), md.partition(), md.offset());
            }
        }
    }
}
