package io.cursus;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * Engine log records to {@link System.Logger} {@code io.cursus} (which routes to
 * {@code java.util.logging} by default, or to SLF4J/Log4j when a {@code LoggerFinder} for them is
 * installed). {@link NativeLib} installs the process-wide listener when the native library
 * loads, with the engine's level set from the most verbose level the logger has enabled, so
 * a level that is off costs nothing: the engine checks it before formatting anything.
 * {@link CursusLogging} changes it later.
 */
final class EngineLog {
    /** The logger every engine record and every listener failure goes to. */
    static final Logger LOGGER = System.getLogger("io.cursus");

    private EngineLog() {}

    /** Installs the log listener (called once, when the library has loaded); never throws. */
    static void install() {
        try {
            NativeBridge.logSetListener(engineLevel(enabledLevel()), EngineLog::onRecord);
        } catch (RuntimeException | LinkageError e) {
            LOGGER.log(Level.WARNING, "cannot forward the Cursus engine's log records", e);
        }
    }

    /** The most verbose level {@link #LOGGER} has enabled ({@link Level#OFF} when none). */
    static Level enabledLevel() {
        for (Level l : new Level[] {Level.TRACE, Level.DEBUG, Level.INFO, Level.WARNING, Level.ERROR}) {
            if (LOGGER.isLoggable(l)) {
                return l;
            }
        }
        return Level.OFF;
    }

    /** The engine's name of a level ({@code ALL} is {@code trace}). */
    static String engineLevel(Level level) {
        switch (level) {
            case ALL:
            case TRACE:
                return "trace";
            case DEBUG:
                return "debug";
            case INFO:
                return "info";
            case WARNING:
                return "warn";
            case ERROR:
                return "error";
            default:
                return "off";
        }
    }

    /** The {@link System.Logger} level of an engine level name. */
    static Level javaLevel(String engineLevel) {
        switch (engineLevel) {
            case "error":
                return Level.ERROR;
            case "warn":
                return Level.WARNING;
            case "info":
                return Level.INFO;
            case "debug":
                return Level.DEBUG;
            default:
                return Level.TRACE;
        }
    }

    /** Runs on the process's {@code cursus-log} thread with a record lent for the call. */
    private static void onRecord(long record) {
        try {
            Level level = javaLevel(NativeBridge.logRecordLevel(record));
            if (LOGGER.isLoggable(level)) {
                LOGGER.log(level, NativeBridge.logRecordTarget(record) + ": " + NativeBridge.logRecordMessage(record));
            }
        } catch (Throwable t) {
            // A logging backend that throws must not reach the engine's log thread.
            System.err.println("io.cursus: a log record could not be logged: " + t);
        }
    }

    /** Logs an exception a user's listener threw (the listener thread goes on). */
    static void listenerFailed(String what, Throwable t) {
        try {
            LOGGER.log(Level.ERROR, "the " + what + " threw; the exception is ignored", t);
        } catch (Throwable ignored) {
            // Logging itself failed: nothing more can be done on this thread.
        }
    }
}
