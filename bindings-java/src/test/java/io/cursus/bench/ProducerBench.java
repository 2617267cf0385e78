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
 * of the process with a connected producer and consumer. Every path first runs untimed with up to
 * 50,000 records on topics of its own, so the figures are the JIT-compiled code's (JMH's warm-up;
 * the engine's native figure has none to wait for). Writes the JSON to the path in {@code
 * cursus.bench.out} (default target/bench/java.json). Arguments: {@code [records]}.
 */
public final class ProducerBench {
    private static final int SIZE = 100;
    private static final int BATCH = 1000;
    /** Records sent and read through every path before the timed run. */
    private static final int WARMUP = 50_000;

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
    private static CursusConsumer consumer(String addr, String group) {
        return new CursusConsumer(ConsumerConfig.builder().bootstrapServers(addr).groupId(group)
                .maxPollRecords(10_000).fetchMaxRecords(8192).build());
    }

    /**
     * The workload: {@code n} single sends to {@code recordTopic}, then {@code n} records in
     * batches to {@code batchTopic}, then {@code n} records read by {@code consumer} (subscribed
     * to {@code batchTopic}). Returns the send call in µs, then records/s of single sends, batch
     * sends and consumption.
     */
    private static double[] run(CursusProducer producer, CursusConsumer consumer, String recordTopic,
            String batchTopic, int n, byte[] payload) {
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            producer.send(ProducerRecord.of(recordTopic, payload));
        }
        double callUs = (System.nanoTime() - start) / 1e3 / n;
        producer.flush();
        double perRecord = n / ((System.nanoTime() - start) / 1e9);

        List<ProducerRecord> batch = new ArrayList<>();
        for (int i = 0; i < BATCH; i++) {
            batch.add(ProducerRecord.of(batchTopic, payload));
        }
        start = System.nanoTime();
        for (int sent = 0; sent < n; ) {
            int count = Math.min(BATCH, n - sent);
            producer.sendBatch(count == BATCH ? batch : batch.subList(0, count));
            sent += count;
        }
        producer.flush();
        double batched = n / ((System.nanoTime() - start) / 1e9);

        start = System.nanoTime();
        long read = 0;
        while (read < n) {
            read += consumer.poll(Duration.ofSeconds(5)).size();
        }
        double consume = n / ((System.nanoTime() - start) / 1e9);
        return new double[] {callUs, perRecord, batched, consume};
    }

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
                admin.createTopic(NewTopic.named("warm-record").partitions(4));
                admin.createTopic(NewTopic.named("warm-batch").partitions(4));
            }
            int warm = Math.min(n, WARMUP);
            double[] figures;
            long rssIdle;
            try (CursusProducer producer = new CursusProducer(ProducerConfig.builder()
                            .bootstrapServers(broker.addr).acks("1").batchSize(256 * 1024).build());
                    CursusConsumer consumer = consumer(broker.addr, "bench")) {
                consumer.subscribe(List.of("bench-batch"));
                rssIdle = rssKib();
                // The JIT first: the same paths, untimed, on topics of their own
                // (as JMH warms up; the engine's figure has no JIT to wait for).
                try (CursusConsumer warmConsumer = consumer(broker.addr, "warm")) {
                    warmConsumer.subscribe(List.of("warm-batch"));
                    run(producer, warmConsumer, "warm-record", "warm-batch", warm, payload);
                }
                figures = run(producer, consumer, "bench-record", "bench-batch", n, payload);
            }
            double callUs = figures[0];
            double perRecord = figures[1];
            double batched = figures[2];
            double consume = figures[3];
            double ep = engineFigure(engineJson, "engine_produce_records_per_s");
            double ec = engineFigure(engineJson, "engine_consume_records_per_s");
            String json = String.format(Locale.ROOT,
                    "{\"binding\": \"java\", \"command\": \"make bench-java (io.cursus.bench.ProducerBench %d)\","
                            + " \"records\": %d, \"warmup_records\": %d, \"payload_bytes\": %d, \"partitions\": 4,"
                            + " \"batch_records\": %d,%n"
                            + " \"engine_produce_records_per_s\": %.0f, \"engine_consume_records_per_s\": %.0f,%n"
                            + " \"produce_batch_records_per_s\": %.0f, \"produce_per_record_records_per_s\": %.0f,%n"
                            + " \"send_call_us\": %.3f, \"consume_records_per_s\": %.0f,%n"
                            + " \"rss_before_clients_kib\": %d, \"idle_client_rss_kib\": %d,%n"
                            + " \"ratio_produce_batch\": %.3f, \"ratio_produce_per_record\": %.3f,"
                            + " \"ratio_consume\": %.3f}%n",
                    n, n, warm, SIZE, BATCH, ep, ec, batched, perRecord, callUs, consume, rssStart, rssIdle,
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
