package io.cursus;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A real {@code cursus-broker} process on a free port of 127.0.0.1 (and, configured so, a
 * TLS listener next to it) with its own temporary directory; {@link #close()} kills it and
 * removes the directory. The binary comes from {@code -Dcursus.broker.bin},
 * {@code $CURSUS_BROKER_BIN}, or {@code ../target/debug/cursus-broker}.
 */
public final class TestBroker implements AutoCloseable {
    private final Process process;
    private final Path root;
    /** Client address of the plain listener, {@code 127.0.0.1:PORT} ({@code off} when off). */
    public final String addr;
    /** Client address of the TLS listener, or null when the broker has none. */
    public final String tlsAddr;

    private TestBroker(Process process, Path root, String addr, String tlsAddr) {
        this.process = process;
        this.root = root;
        this.addr = addr;
        this.tlsAddr = tlsAddr;
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
        return start(null, "127.0.0.1:0");
    }

    /**
     * Starts a broker with a TOML configuration (written to {@code broker.toml} in the
     * broker's own temporary directory; null for none) and waits for its
     * {@code listening addr=} line. The plain listener ({@code listen}: an address, or
     * {@code off} when the configuration has a {@code tls_listen}), the health listener (a
     * free port) and the data directory (in the temporary directory) are given as flags.
     */
    public static TestBroker start(String tomlConfig, String listen) throws IOException {
        Path bin = binary();
        if (!Files.isExecutable(bin)) {
            throw new IOException("no broker binary at " + bin + " (cargo build -p cursus-broker;"
                    + " pass -Dcursus.broker.bin=PATH)");
        }
        // The broker's directory: its data directory and its configuration file.
        Path root = Files.createTempDirectory("cursus-java-broker-");
        Path data = root.resolve("data");
        Files.createDirectory(data);
        List<String> cmd = new ArrayList<>(List.of(bin.toString(), "--listen", listen,
                "--health-listen", "127.0.0.1:0", "--data-dir", data.toString()));
        if (tomlConfig != null) {
            Path config = root.resolve("broker.toml");
            Files.writeString(config, tomlConfig, StandardCharsets.UTF_8);
            cmd.add("--config");
            cmd.add(config.toString());
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectErrorStream(true);
        Process process = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Map<String, String> banner = null;
        StringBuilder seen = new StringBuilder();
        String line;
        while ((line = out.readLine()) != null) {
            seen.append(line).append('\n');
            if (line.startsWith("cursus-broker listening ")) {
                banner = bannerFields(line);
                break;
            }
        }
        if (banner == null || !banner.containsKey("addr")) {
            process.destroyForcibly();
            deleteTree(root);
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
        TestBroker broker = new TestBroker(process, root, banner.get("addr"), banner.get("tls_addr"));
        // Also stop it if the JVM exits (or is terminated) without close().
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "cursus-broker-stop"));
        return broker;
    }

    /** The {@code key=value} words of the banner line. */
    static Map<String, String> bannerFields(String line) {
        Map<String, String> fields = new HashMap<>();
        for (String word : line.split(" ")) {
            int eq = word.indexOf('=');
            if (eq > 0) {
                fields.put(word.substring(0, eq), word.substring(eq + 1));
            }
        }
        return fields;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        deleteTree(root);
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
