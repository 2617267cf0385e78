package io.cursus;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TestBroker} with a TLS listener, mutual TLS and token authentication
 * ({@code enable_sasl}), and the test PKI it uses: certificates made at test time by
 * {@code cursus-test-pki} in a temporary directory (nothing is committed), removed with the
 * broker by {@link #close()}. The PKI tool comes from {@code -Dcursus.pki.bin},
 * {@code $CURSUS_PKI_BIN}, or {@code ../target/debug/cursus-test-pki}.
 *
 * <p>Users: {@code admin} (every permission) and {@code reader} (topic.read only), with the
 * tokens of {@link #TOKENS}.
 */
final class SecureBroker implements AutoCloseable {
    /** Principal to token. */
    static final Map<String, String> TOKENS = Map.of("admin", "admin-token-s3cr3t", "reader", "reader-token-s3cr3t");
    private static final Map<String, List<String>> PERMISSIONS = Map.of(
            "admin", List.of("*"),
            "reader", List.of("topic.read"));

    final TestBroker broker;
    private final Path pki;

    private SecureBroker(TestBroker broker, Path pki) {
        this.broker = broker;
        this.pki = pki;
    }

    /** The PKI tool. */
    static Path pkiTool() {
        String p = System.getProperty("cursus.pki.bin");
        if (p == null || p.isEmpty()) {
            p = System.getenv("CURSUS_PKI_BIN");
        }
        if (p == null || p.isEmpty()) {
            p = "../target/debug/cursus-test-pki";
        }
        return Paths.get(p).toAbsolutePath();
    }

    /** Makes the PKI and starts the broker with TLS, mutual TLS and the users. */
    static SecureBroker start() throws IOException, InterruptedException {
        Path tool = pkiTool();
        if (!Files.isExecutable(tool)) {
            throw new IOException("no PKI tool at " + tool + " (cargo build -p cursus-testkit --bin cursus-test-pki;"
                    + " pass -Dcursus.pki.bin=PATH)");
        }
        Path pki = Files.createTempDirectory("cursus-java-pki-");
        try {
            Process p = new ProcessBuilder(tool.toString(), pki.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException(tool + " failed: " + out);
            }
            StringBuilder toml = new StringBuilder()
                    .append("tls_listen = \"127.0.0.1:0\"\n")
                    .append("tls_cert_file = ").append(quote(pki.resolve("server.pem"))).append('\n')
                    .append("tls_key_file = ").append(quote(pki.resolve("server.key"))).append('\n')
                    .append("tls_client_ca_file = ").append(quote(pki.resolve("ca.pem"))).append('\n')
                    .append("enable_sasl = true\n");
            for (Map.Entry<String, String> user : TOKENS.entrySet()) {
                toml.append("\n[[users]]\n")
                        .append("principal = \"").append(user.getKey()).append("\"\n")
                        .append("token = \"").append(user.getValue()).append("\"\n")
                        .append("permissions = [");
                List<String> perms = PERMISSIONS.get(user.getKey());
                for (int i = 0; i < perms.size(); i++) {
                    toml.append(i == 0 ? "" : ", ").append('"').append(perms.get(i)).append('"');
                }
                toml.append("]\n");
            }
            // TLS only: with a plain listener too, the broker would advertise that one in its
            // metadata, and clients following it to a partition leader would leave TLS.
            TestBroker broker = TestBroker.start(toml.toString(), "off");
            if (broker.tlsAddr == null) {
                broker.close();
                throw new IOException("the broker's banner has no tls_addr= (is TLS built into it?)");
            }
            return new SecureBroker(broker, pki);
        } catch (IOException | InterruptedException | RuntimeException e) {
            TestBroker.deleteTree(pki);
            throw e;
        }
    }

    /** A TOML basic string holding a path. */
    private static String quote(Path path) {
        return '"' + path.toString().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /** A file of the PKI ({@code ca.pem}, {@code client.key}, {@code other-ca.pem}...). */
    String pki(String file) {
        return pki.resolve(file).toString();
    }

    /** The TLS listener's address. */
    String tlsAddr() {
        return broker.tlsAddr;
    }

    /**
     * Sets on {@code builder} what a client of this broker needs: the TLS address, the CA,
     * the client certificate and {@code principal}'s token.
     */
    <B extends BaseConfig.Builder<B>> B secure(B builder, String principal) {
        return builder.bootstrapServers(tlsAddr())
                .tlsCaFile(pki("ca.pem"))
                .tlsCertFile(pki("client.pem"))
                .tlsKeyFile(pki("client.key"))
                .credentials(principal, TOKENS.get(principal));
    }

    @Override
    public void close() {
        broker.close();
        TestBroker.deleteTree(pki);
    }
}
