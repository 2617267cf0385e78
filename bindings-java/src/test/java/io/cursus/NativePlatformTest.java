package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which of the jar's native libraries the loader picks, and what it says when none fits. */
class NativePlatformTest {
    @Test
    void foldsTheJvmsNamesIntoTheJarsPlatformDirectories() {
        assertEquals("linux-x86_64", NativeLib.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLib.platform("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLib.platform("Linux", "aarch64"));
        assertEquals("linux-aarch64", NativeLib.platform("Linux", "arm64"));
        assertEquals("darwin-aarch64", NativeLib.platform("Mac OS X", "aarch64"));
        assertEquals("windows-x86_64", NativeLib.platform("Windows 11", "amd64"));
        // Unknown ones pass through, so the error names what the JVM reported.
        assertEquals("linux-riscv64", NativeLib.platform("Linux", "riscv64"));
        assertEquals("freebsd-x86_64", NativeLib.platform("FreeBSD", "amd64"));
    }

    @Test
    void theJarListsTheRunningPlatform() {
        assertTrue(NativeLib.jarPlatforms().contains(NativeLib.platform()), NativeLib.jarPlatforms().toString());
    }

    @Test
    void noLibraryNamesThePlatformSeenAndTheOnesAvailable() {
        String message = NativeLib.noLibraryFor("linux-riscv64", List.of("linux-aarch64", "linux-x86_64"));
        assertEquals("the jar has no native library for linux-riscv64 (it has linux-aarch64, linux-x86_64)",
                message);
        assertEquals("the jar has no native library for linux-riscv64 (it has none)",
                NativeLib.noLibraryFor("linux-riscv64", List.of()));
    }
}
