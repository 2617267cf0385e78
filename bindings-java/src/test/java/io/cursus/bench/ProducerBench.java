package io.cursus.bench;

import io.cursus.ClientConfig;
import io.cursus.ConsumerConfig;
import io.cursus.CursusAdmin;
import io.cursus.CursusConsumer;
import io.cursus.CursusProducer;
import io.cursus.NewTopic;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import io.cursus.TestBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java binding's figures next to the engine's, same broker, same run. Starts a broker, runs
 * the engine's reference ({@code bench_send engine}, ffi-c/examples/bench_send.rs, the path in
 * system property {@code cursus.engine.bench}) against it, then the same workload from Java:
 * {@code N} records of 100 B to 4 partitions (the partitioner choosing), acks=1, batch_size
 * 256 KiB, sent one {@code send} at a time and in {@code sendBatch} calls of 1000, then read by
 * one group consumer (up to 10,000 per poll). Also the cost of one {@code send} call and the RSS
 * of the process with a connected producer and consumer. Writes the JSON to the path in {@code
 * cursus.bench.out} (default target/bench/java.json). Arguments: {@code [records]}.
 */
public final class ProducerBench {
    private static final int SIZE = 100;
    private static final int BATCH = 1000;

    private ProducerBench() {}

    private static long rssKib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.split("\\s+")[1]);
            }
        }
        return 0;
    }

    private static double engineFigure(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\":\\s*([0-9.]+)").matcher(json);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static double ratio(double a, double b) {
        return b == 0 ? 0 : Math.round(a / b * 1000) / 1000.0;
    }

    /** Entry point. */
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        String engineBin = System.getProperty("cursus.engine.bench");
        Path out = Path.of(System.getProperty("cursus.bench.out", "target/bench/java.json"));
        byte[] payload = new byte[SIZE];
        try (TestBroker broker = TestBroker.start()) {
            String engineJson = "{}";
            if (engineBin != null) {
                Path tmp = Files.createTempFile("engine", ".json");
                Process p = new ProcessBuilder(engineBin, "engine", broker.addr, Integer.toString(n), tmp.toString())
                        .inheritIO().start();
                if (p.waitFor() != 0) {
                    throw new IllegalStateException("the engine reference failed");
                }
                engineJson = Files.readString(tmp);
                Files.delete(tmp);
            }
            long rssStart = rssKib();
            try (CursusAdmin admin = new CursusAdmin(ClientConfig.of(broker.addr))) {
                admin.createTopic(NewTopic.named("bench-record").partitions(4));
                admin.createTopic(NewTopic.named("bench-batch").partitions(4));
            }
            double perRecord;
            double batched;
            double consume;
            double callUs;
            long rssIdle;
            try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                            .bootstrapServers(broker.addr).acks("1").batchSize(256 * 1024).build());
                    CursusConsumer consumer = new CursusConsumer(ConsumerConfig.builder()
                            .bootstrapServers(broker.addr).groupId("bench").maxPollRecords(10_000)
                            .fetchMaxRecords(8192).build())) {
                consumer.subscribe(List.of("bench-batch"));
                rssIdle = rssKib();

                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    producer.send(ProducerRecord.of("bench-record", payload));
                }
                callUs = (System.nanoTime() - start) / 1e3 / n;
                producer.flush();
                perRecord = n / ((System.nanoTime() - start) / 1e9);

                List<ProducerRecord> batch = new ArrayList<>();
                for (int i = 0; i < BATCH; i++) {
                    batch.add(ProducerRecord.of("bench-batch", payload));
                }
                start = System.nanoTime();
                for (int sent = 0; sent < n; ) {
                    int count = Math.min(BATCH, n - sent);
                    producer.sendBatch(count == BATCH ? batch : batch.subList(0, count));
                    sent += count;
                }
                producer.flush();
                batched = n / ((System.nanoTime() - start) / 1e9);

                start = System.nanoTime();
                long read = 0;
                while (read < n) {
                    read += consumer.poll(Duration.ofSeconds(5)).size();
                }
                consume = n / ((System.nanoTime() - start) / 1e9);
            }
            double ep = engineFigure(engineJson, "engine_produce_records_per_s");
            double ec = engineFigure(engineJson, "engine_consume_records_per_s");
            String json = String.format(Locale.ROOT,
                    "{\"binding\": \"java\", \"command\": \"make bench-java (io.cursus.bench.ProducerBench %d)\","
                            + " \"records\": %d, \"payload_bytes\": %d, \"partitions\": 4, \"batch_records\": %d,%n"
                            + " \"engine_produce_records_per_s\": %.0f, \"engine_consume_records_per_s\": %.0f,%n"
                            + " \"produce_batch_records_per_s\": %.0f, \"produce_per_record_records_per_s\": %.0f,%n"
                            + " \"send_call_us\": %.3f, \"consume_records_per_s\": %.0f,%n"
                            + " \"rss_before_clients_kib\": %d, \"idle_client_rss_kib\": %d,%n"
                            + " \"ratio_produce_batch\": %.3f, \"ratio_produce_per_record\": %.3f,"
                            + " \"ratio_consume\": %.3f}%n",
                    n, n, SIZE, BATCH, ep, ec, batched, perRecord, callUs, consume, rssStart, rssIdle,
                    ratio(batched, ep), ratio(perRecord, ep), ratio(consume, ec));
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, json);
            System.out.printf(Locale.ROOT,
                    "Java: batch %.0f records/s (%.2f of the engine), per record %.0f records/s (%.2f), %.2f us per"
                            + " send call; consume %.0f records/s (%.2f); idle producer+consumer RSS %d KiB (%d"
                            + " before)%n",
                    batched, ratio(batched, ep), perRecord, ratio(perRecord, ep), callUs, consume, ratio(consume, ec),
                    rssIdle, rssStart);
        }
    }
}
