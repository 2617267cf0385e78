package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AdminTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void topicLifecycle() {
        try (CursusAdmin admin = BROKER.admin()) {
            TopicInfo info = admin.createTopic(NewTopic.named("orders").partitions(3).retentionHours(24));
            assertEquals("orders", info.name());
            assertEquals(3, info.partitions());
            assertEquals(24, info.retentionHours());
            assertNull(info.minInSyncReplicas());
            assertTrue(admin.listTopics().contains("orders"));

            TopicMetadata md = admin.metadata("orders");
            assertEquals(3, md.leaders().size());
            assertEquals(3, md.epochs().size());
            assertEquals(BROKER.addr(), md.leaders().get(0));

            TopicDescription d = admin.describeTopic("orders");
            assertEquals("orders", d.topic());
            assertEquals(3, d.partitions().size());
            assertEquals(info.name(), d.definition().name());
            assertEquals(24, d.definition().retentionHours());
            assertEquals(1, d.partitions().get(1).replicas().size());
            assertEquals(0, d.partitions().get(1).earliest());

            List<PartitionOffsets> offsets = admin.listOffsets("orders");
            assertEquals(3, offsets.size());
            assertEquals(0, offsets.get(0).logEndOffset());
            assertEquals(1, admin.listOffsets("orders", 2).size());

            // Patching grows partitions and bumps the revision.
            TopicInfo grown = admin.createTopic(NewTopic.named("orders").partitions(4));
            assertEquals(4, grown.partitions());
            assertTrue(grown.revision() > info.revision());

            TruncateResult t = admin.truncateTopic("orders", grown.revision());
            assertTrue(t.revision() > grown.revision());
            assertTrue(t.lifecycleEpoch() > grown.lifecycleEpoch());

            assertTrue(admin.deleteTopic("orders", false).deleted());
            assertFalse(admin.deleteTopic("orders", true).deleted());
            assertFalse(admin.listTopics().contains("orders"));
            assertTrue(admin.help().contains("PUBLISH"), admin.help().toString());
        }
    }

    @Test
    void groupsAreListedAndDescribed() {
        BROKER.createTopic("admin-groups", 2);
        try (CursusAdmin admin = BROKER.admin();
                CursusConsumer consumer = new CursusConsumer(ConsumerConfig.builder()
                        .bootstrapServers(BROKER.addr()).groupId("admin-g").fetchMaxWaitMs(50).build())) {
            consumer.subscribe(List.of("admin-groups"));
            assertEquals("", consumer.memberId()); // joins on the first poll
            consumer.poll(java.time.Duration.ofMillis(200));
            assertTrue(admin.listGroups().contains("admin-g"), admin.listGroups().toString());
            GroupStatus status = admin.groupStatus("admin-g");
            assertEquals("admin-g", status.groupName());
            assertEquals(1, status.memberCount());
            assertEquals(1, status.members().size());
            assertEquals(2, status.members().get(0).assignments().size());
            assertEquals(status.members().get(0).memberId(), consumer.memberId());
            consumer.close();
            assertThrows(CursusClosedException.class, consumer::memberId);
        }
    }
}
