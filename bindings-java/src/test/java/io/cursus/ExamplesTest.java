package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cursus.examples.ConsumerGroupExample;
import io.cursus.examples.EventSourcingExample;
import io.cursus.examples.ProducerExample;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ExamplesTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void producerThenConsumerGroup() throws Exception {
        ProducerExample.main(new String[] {BROKER.addr(), "example"});
        assertEquals(10, ConsumerGroupExample.run(new String[] {BROKER.addr(), "example", "example-group", "10"}));
    }

    @Test
    void eventSourcing() {
        assertEquals(15, EventSourcingExample.run(new String[] {BROKER.addr(), "accounts"}));
    }
}
