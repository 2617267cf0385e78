package io.cursus;

import java.lang.System.Logger.Level;
import java.util.Objects;

/**
 * The engine's log records go to the {@link System.Logger} named {@code io.cursus} (which
 * routes to {@code java.util.logging} by default, or to SLF4J/Log4j through their
 * {@code System.LoggerFinder}), at the mapped levels: engine {@code error}, {@code warn},
 * {@code info}, {@code debug}, {@code trace} become {@link Level#ERROR}, {@link Level#WARNING},
 * {@link Level#INFO}, {@link Level#DEBUG}, {@link Level#TRACE}. Each message starts with the
 * engine module it comes from ({@code cursus::consumer::group: joined group ...}).
 *
 * <p>The forwarding is installed when the native library loads (the first use of any client
 * class), with the engine's level set from the most verbose level that logger has enabled
 * then: the engine filters before formatting, so a disabled level costs nothing. Records are
 * delivered in order on the process's {@code cursus-log} thread. When the logging
 * configuration changes later, call {@link #syncLevel()}.
 */
public final class CursusLogging {
    private CursusLogging() {}

    /**
     * Sets the engine's level again from what the {@code io.cursus} logger has enabled now.
     *
     * @return the level now in force ({@link Level#OFF} when the logger enables nothing)
     */
    public static Level syncLevel() {
        Level level = EngineLog.enabledLevel();
        setEngineLevel(level);
        return level;
    }

    /**
     * Sets the engine's level explicitly: records below it are not produced at all
     * ({@link Level#OFF} stops them; {@link Level#ALL} is {@link Level#TRACE}). Records at or
     * above it are still filtered by the {@code io.cursus} logger.
     *
     * @param level the level
     */
    public static void setEngineLevel(Level level) {
        Objects.requireNonNull(level, "level");
        NativeLib.ensureLoaded();
        NativeBridge.logSetLevel(EngineLog.engineLevel(level));
    }
}
