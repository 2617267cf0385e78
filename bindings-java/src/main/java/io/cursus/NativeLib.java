package io.cursus;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Loads {@code libcursus_jni} (extracted from the jar), checks that its version matches
 * these classes, installs the engine's log forwarding ({@link EngineLog}), and builds the
 * exceptions the library throws. The entry points themselves
 * are in the generated {@link NativeBridge}.
 */
final class NativeLib {
    /** Version of these Java classes (from the Maven build); the native library must match. */
    static final String VERSION = readVersion();

    private static final String LIB = "cursus_jni";
    /** The list of the jar's platforms, one a line (bindings-java/build.mk writes it). */
    private static final String PLATFORMS_INDEX = "/native/platforms.txt";
    private static String loadedFrom;
    private static CursusException loadError;
    private static boolean attempted;

    private NativeLib() {}

    private static String readVersion() {
        try (InputStream in = NativeLib.class.getResourceAsStream("version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * Loads the native library once and checks its version; never throws (the failure is
     * kept for {@link #ensureLoaded}). {@link NativeBridge}'s initializer calls it.
     */
    static synchronized void load() {
        if (attempted) {
            return;
        }
        attempted = true;
        try {
            loadedFrom = loadLibrary();
            String nativeVersion = nativeVersion();
            if (!VERSION.equals(nativeVersion)) {
                loadError = internal("native_library_mismatch",
                        "libcursus_jni " + nativeVersion + " loaded from " + loadedFrom
                                + " does not match the Java classes " + VERSION
                                + "; use the jar's own library (unset -Dcursus.native.library)");
            } else {
                // Engine log records go to System.Logger "io.cursus" from now on.
                EngineLog.install();
            }
        } catch (CursusException e) {
            loadError = e;
        }
    }

    /** Loads the library if needed; throws why it is unusable, if it is. */
    static void ensureLoaded() {
        CursusException error;
        synchronized (NativeLib.class) {
            load();
            error = loadError;
        }
        if (error != null) {
            // A fresh exception per call, so each caller's stack trace is its own.
            throw CursusException.of(error.kind(), error.code(), error.errorClass(), error.isRetryable(),
                    error.detail(), error.fields());
        }
    }

    /** Where the library was loaded from (a file path, or {@code java.library.path}). */
    static String loadedFrom() {
        ensureLoaded();
        synchronized (NativeLib.class) {
            return loadedFrom;
        }
    }

    /** The running platform, as the jar names its native directories ({@code linux-x86_64}). */
    static String platform() {
        return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    /**
     * The platform directory for {@code os.name} and {@code os.arch}: {@code <os>-<arch>} with
     * the JVM's aliases folded ({@code amd64} is {@code x86_64}, {@code arm64} is
     * {@code aarch64}, {@code Mac OS X} is {@code darwin}).
     */
    static String platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "darwin"
                : os.startsWith("windows") ? "windows" : os.replaceAll("\\W", "");
        String a = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
        return o + "-" + a;
    }

    /**
     * The platforms this jar carries a native library for, from {@code native/platforms.txt}
     * (written by the build next to the {@code native/<platform>/} directories); empty if the
     * jar has none.
     */
    static List<String> jarPlatforms() {
        List<String> platforms = new ArrayList<>();
        try (InputStream in = NativeLib.class.getResourceAsStream(PLATFORMS_INDEX)) {
            if (in != null) {
                for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                    if (!line.isBlank()) {
                        platforms.add(line.strip());
                    }
                }
            }
        } catch (IOException e) {
            // An unreadable index reads as no platforms: the error then says so.
        }
        return platforms;
    }

    /** Why the jar has no library for {@code platform}: the platform seen and the ones the jar has. */
    static String noLibraryFor(String platform, List<String> available) {
        return "the jar has no native library for " + platform + " (it has "
                + (available.isEmpty() ? "none" : String.join(", ", available)) + ")";
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
    private static String loadLibrary() {
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
            return extractAndLoad(platform, resource, file, tmpRoot);
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

    private static String extractAndLoad(String platform, String resource, String file, String tmpRoot)
            throws IOException {
        try (InputStream in = NativeLib.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException(noLibraryFor(platform, jarPlatforms()));
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

    /**
     * Called by the native library to build the exception for an engine error; {@code text}
     * is the engine's rendering, the same in every language.
     */
    static CursusException error(String kind, String code, String errorClass, boolean retryable,
            String message, String text, String[] fields) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < fields.length; i += 2) {
            map.put(fields[i], fields[i + 1]);
        }
        return CursusException.create(kind, code, ErrorClass.fromWireName(errorClass), retryable, message,
                map, text);
    }

    /** Reads an engine error handle (lent or owned; not destroyed here) into an exception. */
    static CursusException fromHandle(long error) {
        String[] fields = new String[2 * NativeBridge.errorFieldCount(error)];
        for (int i = 0; i < fields.length / 2; i++) {
            fields[2 * i] = NativeBridge.errorFieldName(error, i);
            fields[2 * i + 1] = NativeBridge.errorFieldValue(error, i);
        }
        return error(NativeBridge.errorKind(error), NativeBridge.errorCode(error),
                NativeBridge.errorClassName(error), NativeBridge.errorRetryable(error),
                NativeBridge.errorMessage(error), NativeBridge.errorText(error), fields);
    }

    /** The error for use of a closed object (the engine's code for it). */
    static CursusException closed(String what) {
        return CursusException.of("closed", "closed", ErrorClass.VALIDATION, false, what + " is closed", Map.of());
    }

    /** The library version, which must equal {@link #VERSION}. */
    static native String nativeVersion();

    /**
     * {@link NativeBridge#consumerPollBatch} into {@code buffer} (null for none): returns
     * {@code buffer} holding the packed record view when it fits, else a new, larger array
     * (bytes past the view are unspecified). Hand-written in {@code native/src/poll.rs}.
     */
    static native byte[] consumerPollInto(long consumer, long timeoutMs, int maxRecords, byte[] buffer);
}
