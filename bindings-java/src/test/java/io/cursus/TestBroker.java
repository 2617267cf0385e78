package io.cursus;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A real {@code cursus-broker} process on a free port of 127.0.0.1 with its own temporary
 * data directory; {@link #close()} kills it and removes the directory. The binary comes
 * from {@code -Dcursus.broker.bin}, {@code $CURSUS_BROKER_BIN}, or
 * {@code ../target/debug/cursus-broker}.
 */
public final class TestBroker implements AutoCloseable {
    private final Process process;
    private final Path dataDir;
    /** Client address, {@code 127.0.0.1:PORT}. */
    public final String addr;

    private TestBroker(Process process, Path dataDir, String addr) {
        this.process = process;
        this.dataDir = dataDir;
        this.addr = addr;
    }

    /** The broker binary. */
    public static Path binary() {
        String p = System.getProperty("cursus.broker.bin");
        if (p == null || p.isEmpty()) {
            p = System.getenv("CURSUS_BROKER_BIN");
        }
        if (p == null || p.isEmpty()) {
            p = "../target/debug/cursus-broker";
        }
        return Paths.get(p).toAbsolutePath();
    }

    /** Starts a broker and waits for its {@code listening addr=} line. */
    public static TestBroker start() throws IOException {
        Path bin = binary();
        if (!Files.isExecutable(bin)) {
            throw new IOException("no broker binary at " + bin + " (cargo build -p cursus-broker;"
                    + " pass -Dcursus.broker.bin=PATH)");
        }
        Path data = Files.createTempDirectory("cursus-java-broker-");
        ProcessBuilder pb = new ProcessBuilder(bin.toString(), "--listen", "127.0.0.1:0",
                "--health-listen", "127.0.0.1:0", "--data-dir", data.toString());
        pb.redirectErrorStream(true);
        Process process = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String addr = null;
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = out.readLine()) != null) {
            seen.append(line).append('\n');
            int i = line.indexOf("addr=");
            if (line.contains("listening") && i >= 0) {
                int end = line.indexOf(' ', i);
                addr = line.substring(i + 5, end < 0 ? line.length() : end);
                break;
            }
        }
        if (addr == null) {
            process.destroyForcibly();
            deleteTree(data);
            throw new IOException("broker exited before listening:\n" + seen);
        }
        // Keep draining its output so it never blocks on a full pipe.
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // discard
                }
            } catch (IOException ignored) {
                // the broker is gone
            }
        }, "cursus-broker-output");
        drain.setDaemon(true);
        drain.start();
        TestBroker broker = new TestBroker(process, data, addr);
        // Also stop it if the JVM exits (or is terminated) without close().
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "cursus-broker-stop"));
        return broker;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        deleteTree(dataDir);
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
