package io.cursus;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The native methods of {@code libcursus_jni} and the loader that extracts the library
 * from the jar. Package-private: the public classes call it under their handle locks.
 */
final class NativeLib {
    /** Version of this Java code; must equal the native library's crate version. */
    static final String VERSION = "0.1.0";

    private static final String LIB = "cursus_jni";
    private static volatile String loadedFrom;
    private static final CursusException LOAD_ERROR;

    static {
        CursusException error = null;
        try {
            loadedFrom = load();
            String nativeVersion = nativeVersion();
            if (!VERSION.equals(nativeVersion)) {
                error = internal("native_library_mismatch",
                        "libcursus_jni " + nativeVersion + " loaded from " + loadedFrom
                                + " does not match the Java classes " + VERSION);
            }
        } catch (CursusException e) {
            error = e;
        }
        LOAD_ERROR = error;
    }

    private NativeLib() {}

    /** Throws why the native library is unusable, if it is. */
    static void ensureLoaded() {
        if (LOAD_ERROR != null) {
            throw LOAD_ERROR;
        }
    }

    /** Where the library was loaded from (a file path, or {@code java.library.path}). */
    static String loadedFrom() {
        ensureLoaded();
        return loadedFrom;
    }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "darwin"
                : os.startsWith("windows") ? "windows" : os.replaceAll("\\W", "");
        String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
        return o + "-" + a;
    }

    private static CursusException internal(String code, String message) {
        return CursusException.of("internal", code, ErrorClass.INTERNAL, false, message, Map.of());
    }

    /**
     * Loads the library: {@code -Dcursus.native.library=FILE} if set; else the copy in the
     * jar, extracted to a private temporary directory (under {@code -Dcursus.native.tmpdir}
     * or {@code java.io.tmpdir}); else {@code System.loadLibrary("cursus_jni")} from
     * {@code java.library.path}.
     */
    private static String load() {
        String explicit = System.getProperty("cursus.native.library");
        if (explicit != null && !explicit.isEmpty()) {
            try {
                System.load(Paths.get(explicit).toAbsolutePath().toString());
                return explicit;
            } catch (UnsatisfiedLinkError e) {
                throw internal("native_library_unavailable",
                        "cannot load -Dcursus.native.library=" + explicit + ": " + e.getMessage());
            }
        }
        String platform = platform();
        String file = System.mapLibraryName(LIB);
        String resource = "/native/" + platform + "/" + file;
        String tmpRoot = System.getProperty("cursus.native.tmpdir", System.getProperty("java.io.tmpdir"));
        String jarError;
        try {
            return extractAndLoad(resource, file, tmpRoot);
        } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
            jarError = e.getClass().getSimpleName() + ": " + e.getMessage();
            if (e instanceof UnsatisfiedLinkError) {
                jarError += " (if " + tmpRoot + " is mounted noexec, set -Dcursus.native.tmpdir to"
                        + " a directory that allows executable mappings)";
            }
        }
        try {
            System.loadLibrary(LIB);
            return "java.library.path";
        } catch (UnsatisfiedLinkError | SecurityException e) {
            throw internal("native_library_unavailable",
                    "cannot load the Cursus native library on os.name="
                            + System.getProperty("os.name") + " os.arch=" + System.getProperty("os.arch")
                            + " (platform " + platform + "). From the jar (" + resource + " via temp dir "
                            + tmpRoot + "): " + jarError + ". From java.library.path ("
                            + System.getProperty("java.library.path") + "): " + e.getMessage());
        }
    }

    private static String extractAndLoad(String resource, String file, String tmpRoot) throws IOException {
        try (InputStream in = NativeLib.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("the jar has no " + resource + " (no native build for this platform)");
            }
            Path root = Paths.get(tmpRoot);
            Path dir;
            if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
                dir = Files.createTempDirectory(root, "cursus-jni-",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else {
                dir = Files.createTempDirectory(root, "cursus-jni-");
            }
            Path lib = dir.resolve(file);
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            try {
                System.load(lib.toAbsolutePath().toString());
            } finally {
                // A mapped library stays usable after its file is unlinked (POSIX); on
                // Windows the file is locked, so it goes when the JVM exits.
                try {
                    Files.deleteIfExists(lib);
                    Files.deleteIfExists(dir);
                } catch (IOException e) {
                    lib.toFile().deleteOnExit();
                    dir.toFile().deleteOnExit();
                }
            }
            return lib.toString();
        }
    }

    /** Called by the native library to build the exception for an engine error. */
    static CursusException error(
            String kind, String code, String errorClass, boolean retryable, String message, String[] fields) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i + 1 < fields.length; i += 2) {
            map.put(fields[i], fields[i + 1]);
        }
        return CursusException.of(kind, code, ErrorClass.fromWireName(errorClass), retryable, message, map);
    }

    /** The error for use of a closed object (same code as the engine's). */
    static CursusClosedException closed(String what) {
        return new CursusClosedException("closed", "closed", ErrorClass.VALIDATION, false, what + " is closed", Map.of());
    }

    static String[] flatten(Map<String, String> map) {
        String[] out = new String[map.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : map.entrySet()) {
            out[i++] = e.getKey();
            out[i++] = e.getValue();
        }
        return out;
    }

    // Library
    static native String nativeVersion();
    static native String[] options(int which);
    static native void validateConfig(int which, String[] kv);
    static native void debugRaise(String kind, String code, String message, String[] fields);

    // Admin
    static native long adminConnect(String[] kv);
    static native byte[] adminCreateTopic(long h, String[] topicKv);
    static native byte[] adminAlterTopicConfig(long h, String topic, int minIsr);
    static native int adminDeleteTopic(long h, String topic, boolean ifExists);
    static native byte[] adminTruncateTopic(long h, String topic, long expectedRevision);
    static native String[] adminListTopics(long h);
    static native String[] adminListGroups(long h);
    static native String[] adminHelp(long h);
    static native byte[] adminDescribeTopic(long h, String topic);
    static native byte[] adminMetadata(long h, String topic);
    static native byte[] adminListOffsets(long h, String topic, int partition);
    static native byte[] adminGroupStatus(long h, String group);
    static native void adminClose(long h);
    static native void adminFree(long h);

    // Producer
    static native long producerConnect(String[] kv);
    static native void producerSend(long h, String topic, int partition, byte[] key, byte[] value,
            long timestamp, boolean hasTimestamp, NativeCompletion completion);
    static native void producerFlush(long h, long timeoutMs);
    static native void producerClose(long h, long timeoutMs);
    static native void producerFree(long h);

    // Consumer
    static native long consumerConnect(String[] kv);
    static native void consumerSubscribe(long h, String[] topics);
    static native void consumerSubscribePattern(long h, String pattern);
    static native byte[] consumerPoll(long h, long timeoutMs);
    static native void consumerCommitSync(long h);
    static native void consumerCommitOffsets(long h, String[] topics, int[] partitions, long[] offsets);
    static native void consumerCommitAsync(long h, NativeCompletion completion);
    static native long consumerCommitted(long h, String topic, int partition);
    static native byte[] consumerAssignment(long h);
    static native void consumerClose(long h);
    static native void consumerFree(long h);
}
