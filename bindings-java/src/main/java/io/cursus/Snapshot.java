package io.cursus;

/**
 * An aggregate's snapshot: its state serialised by the application, as of a version.
 *
 * @param version the last aggregate version the state includes
 * @param state the serialised state (UTF-8 text)
 */
public record Snapshot(long version, String state) {}
