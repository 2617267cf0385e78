package io.cursus;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading the native library, each case in a fresh JVM (a library loads once per JVM). */
class NativeLoaderTest {
    private static String probe(String... props) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xcheck:jni");
        cmd.addAll(List.of(props));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(LoaderProbe.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        p.waitFor();
        return out;
    }

    @Test
    void extractsFromTheJarToAPrivateTempDir(@TempDir Path tmp) throws Exception {
        String out = probe("-Dcursus.native.tmpdir=" + tmp);
        assertTrue(out.startsWith("LOADED " + tmp.resolve("cursus-jni-")), out);
        // The extracted copy is removed once loaded.
        try (var left = Files.list(tmp)) {
            assertTrue(left.findAny().isEmpty(), "temp dir not cleaned");
        }
    }

    @Test
    void failureExplainsPlatformTempDirAndLibraryPath() throws Exception {
        String out = probe("-Dcursus.native.tmpdir=/nonexistent/cursus-tmp", "-Djava.library.path=/nonexistent/lib");
        assertTrue(out.startsWith("FAILED native_library_unavailable"), out);
        assertTrue(out.contains("os.name=") && out.contains("os.arch="), out);
        assertTrue(out.contains("/nonexistent/cursus-tmp"), out);
        assertTrue(out.contains("java.library.path (/nonexistent/lib)"), out);
    }

    @Test
    void unknownPlatformNamesItAndTheJarsPlatforms() throws Exception {
        // The JVM reports an architecture the jar has no library for.
        String out = probe("-Dos.arch=riscv64", "-Djava.library.path=/nonexistent/lib");
        assertTrue(out.startsWith("FAILED native_library_unavailable"), out);
        String seen = NativeLib.platform(System.getProperty("os.name"), "riscv64");
        assertTrue(out.contains("the jar has no native library for " + seen + " (it has "
                + String.join(", ", NativeLib.jarPlatforms()) + ")"), out);
    }

    @Test
    void fallsBackToJavaLibraryPath(@TempDir Path tmp) throws Exception {
        Path lib = tmp.resolve(System.mapLibraryName("cursus_jni"));
        try (InputStream in = NativeLib.class.getResourceAsStream(
                "/native/" + NativeLib.platform() + "/" + System.mapLibraryName("cursus_jni"))) {
            Files.copy(in, lib);
        }
        String out = probe("-Dcursus.native.tmpdir=/nonexistent/cursus-tmp", "-Djava.library.path=" + tmp);
        assertTrue(out.startsWith("LOADED java.library.path"), out);
    }
}
