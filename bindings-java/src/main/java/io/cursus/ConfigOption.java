package io.cursus;

/**
 * One documented configuration option, as the engine defines it.
 *
 * @param name option name, as passed to {@code set}
 * @param type value type: {@code integer}, {@code boolean}, {@code string} or {@code list}
 *     (comma-separated)
 * @param defaultValue default value, as text
 * @param doc what the option does
 */
public record ConfigOption(String name, String type, String defaultValue, String doc) {}
