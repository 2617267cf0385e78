package io.cursus.examples;

import io.cursus.ConsumerConfig;
import io.cursus.ConsumerRebalanceListener;
import io.cursus.ConsumerRecord;
import io.cursus.CursusConsumer;
import io.cursus.Statistics;
import io.cursus.TopicPartition;
import java.time.Duration;
import java.util.Collection;
import java.util.List;

/**
 * Joins a consumer group with a rebalance listener (commits before partitions go), reads up to
 * {@code max} records, commits, prints the lag per partition, and leaves.
 * Run: {@code java -cp cursus.jar:test-classes io.cursus.examples.ConsumerGroupExample 127.0.0.1:9000}
 */
public final class ConsumerGroupExample {
    private ConsumerGroupExample() {}

    /** Entry point: {@code [bootstrap_servers] [topic] [group] [max]}; returns the count read. */
    public static int run(String[] args) {
        String servers = args.length > 0 ? args[0] : "127.0.0.1:9000";
        String topic = args.length > 1 ? args[1] : "quickstart";
        String group = args.length > 2 ? args[2] : "quickstart-group";
        int max = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        ConsumerConfig config = ConsumerConfig.builder()
                .bootstrapServers(servers)
                .groupId(group)
                .autoOffsetReset("earliest")
                .build();
        int read = 0;
        try (CursusConsumer consumer = new CursusConsumer(config)) {
            consumer.setErrorListener(e -> System.err.println("background error: " + e.getMessage()));
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    System.out.println("assigned " + partitions);
                }

                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    consumer.commitSync(); // also runs at close: what was read is committed
                    System.out.println("revoked " + partitions);
                }
            });
            for (int polls = 0; polls < 100 && read < max; polls++) {
                for (ConsumerRecord r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.printf("%s/%d@%d key=%s value=%s%n",
                            r.topic(), r.partition(), r.offset(), r.keyAsString(), r.valueAsString());
                    read++;
                }
                consumer.commitAsync();
            }
            consumer.commitSync();
            Statistics stats = consumer.statistics();
            for (Statistics.PartitionLag p : stats.partitions()) {
                System.out.printf("%s lag %s%n", p.topicPartition(), p.lag());
            }
        }
        return read;
    }

    /** Entry point. */
    public static void main(String[] args) {
        System.out.println("read " + run(args) + " records");
    }
}
