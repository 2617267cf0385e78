package io.cursus;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Test helper: polls until enough records arrived (bounded number of polls). */
final class Polling {
    private Polling() {}

    static List<ConsumerRecord> pollAtLeast(CursusConsumer consumer, int n) {
        List<ConsumerRecord> got = new ArrayList<>();
        for (int i = 0; i < 400 && got.size() < n; i++) {
            got.addAll(consumer.poll(Duration.ofMillis(100)));
        }
        return got;
    }
}
