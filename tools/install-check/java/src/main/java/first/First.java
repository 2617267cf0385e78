package first;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A first Cursus program, as a user writes it from the README. */
public final class First {
    private First() {}

    public static void main(String[] args) {
        String bootstrap = System.getenv().getOrDefault("CURSUS_TEST_BROKER", "127.0.0.1:9000");
        try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(bootstrap))) {
            admin.createTopic(NewTopic.named("first-java").partitions(1));
        }
        RecordMetadata stored;
        try (CursusProducer producer = new CursusProducer(ProducerConfig.of(bootstrap))) {
            stored = producer.sendAndWait(ProducerRecord.of("first-java", "k", "hello"));
        }
        List<ConsumerRecord> got = new ArrayList<>();
        try (CursusConsumer consumer = new CursusConsumer(ConsumerConfig.of(bootstrap, "first-java"))) {
            consumer.subscribe(List.of("first-java"));
            for (int i = 0; i < 100 && got.isEmpty(); i++) {
                got.addAll(consumer.poll(Duration.ofMillis(200)));
            }
            consumer.commitSync();
        }
        if (got.isEmpty() || !got.get(0).valueAsString().equals("hello")) {
            throw new AssertionError("the record did not come back: " + got);
        }
        System.out.println("java: sent to partition " + stored.partition() + " offset " + stored.offset()
                + ", read back " + got.get(0).valueAsString());
    }
}
