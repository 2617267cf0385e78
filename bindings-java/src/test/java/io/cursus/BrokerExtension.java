package io.cursus;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 fixture: one {@link TestBroker} per test class. Register it as
 * {@code @RegisterExtension static final BrokerExtension BROKER = new BrokerExtension();}.
 */
public final class BrokerExtension implements BeforeAllCallback, AfterAllCallback {
    private TestBroker broker;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        broker = TestBroker.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }

    /** The broker's client address. */
    public String addr() {
        return broker.addr;
    }

    /** An admin connected to the broker. */
    public CursusAdmin admin() {
        return new CursusAdmin(ClientConfig.of(addr()));
    }

    /** Creates a topic. */
    public void createTopic(String name, int partitions) {
        try (CursusAdmin admin = admin()) {
            admin.createTopic(NewTopic.named(name).partitions(partitions));
        }
    }
}
