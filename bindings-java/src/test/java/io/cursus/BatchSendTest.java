package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class BatchSendTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void aBatchDeliversEveryRecordInOrderWithOneCompletion() throws Exception {
        BROKER.createTopic("batch-send", 1);
        try (CursusProducer producer = new CursusProducer(
                ProducerConfig.builder().bootstrapServers(BROKER.addr()).build())) {
            List<ProducerRecord> records = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                records.add(ProducerRecord.of("batch-send", "k" + i, "v" + i).withPartition(0).withTimestamp(500 + i));
            }
            AtomicInteger completions = new AtomicInteger();
            CompletableFuture<List<RecordMetadata>> f = producer.sendBatch(records);
            CompletableFuture<Integer> counted = f.thenApply(mds -> completions.incrementAndGet());
            List<RecordMetadata> mds = f.get(30, TimeUnit.SECONDS);
            assertEquals(5, mds.size());
            for (int i = 0; i < 5; i++) {
                assertEquals("batch-send", mds.get(i).topic());
                assertEquals(0, mds.get(i).partition());
                assertEquals(i, mds.get(i).offset());
                assertEquals(500 + i, mds.get(i).timestamp());
            }
            assertEquals(1, counted.get(30, TimeUnit.SECONDS));
            assertEquals(1, completions.get());

            // Partition 9 does not exist: that record alone fails.
            records.set(2, ProducerRecord.of("batch-send", "bad").withPartition(9));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> producer.sendBatch(records).get(30, TimeUnit.SECONDS));
            BatchDeliveryException be = assertInstanceOf(BatchDeliveryException.class, e.getCause());
            assertEquals(5, be.metadata().size());
            assertNull(be.metadata().get(2));
            assertInstanceOf(CursusException.class, be.errors().get(2));
            assertEquals("invalid_argument", be.errors().get(2).kind());
            assertEquals(be.errors().get(2), be.getCause());
            long expected = 5;
            for (int i = 0; i < 5; i++) {
                if (i == 2) {
                    continue;
                }
                assertNull(be.errors().get(i));
                assertNotNull(be.metadata().get(i));
                assertEquals(expected++, be.metadata().get(i).offset());
            }

            assertTrue(producer.sendBatch(List.of()).get(30, TimeUnit.SECONDS).isEmpty());
            // One topic per batch: the library's rule and error, as in every language.
            ValidationException mixed = assertThrows(ValidationException.class, () -> producer.sendBatch(
                    List.of(ProducerRecord.of("batch-send", "a"), ProducerRecord.of("other", "b"))));
            assertEquals("invalid_argument", mixed.code());
            assertEquals(ErrorClass.VALIDATION, mixed.errorClass());
            assertEquals("a batch has one topic: record 1 is for \"other\", the batch for \"batch-send\"",
                    mixed.detail());
            producer.close();
            assertThrows(CursusClosedException.class, () -> producer.sendBatch(records));
        }
    }
}
