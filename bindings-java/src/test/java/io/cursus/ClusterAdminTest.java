package io.cursus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/** Cluster administration against the standalone test broker, which refuses all three calls. */
class ClusterAdminTest {
    @RegisterExtension
    static final BrokerExtension BROKER = new BrokerExtension();

    @Test
    void standaloneBrokerRefusesClusterAdmin() {
        try (CursusAdmin admin = BROKER.admin()) {
            List<Executable> calls = List.of(
                    admin::clusterStatus,
                    () -> admin.electLeader("orders", 0, "broker-1"),
                    () -> admin.reassignPartition("orders", 0, List.of("broker-1")),
                    admin::listCluster);
            for (Executable call : calls) {
                ValidationException e = assertThrows(ValidationException.class, call);
                assertEquals("distribution_not_enabled", e.code());
                assertEquals(ErrorClass.VALIDATION, e.errorClass());
            }
            admin.close();
            assertThrows(CursusClosedException.class, admin::clusterStatus);
        }
    }

    @Test
    void electLeaderChecksItsArguments() {
        try (CursusAdmin admin = BROKER.admin()) {
            assertThrows(NullPointerException.class, () -> admin.electLeader(null, 0, "broker-1"));
            assertThrows(NullPointerException.class, () -> admin.electLeader("orders", 0, null));
            assertThrows(NullPointerException.class, () -> admin.reassignPartition(null, 0, List.of("b1")));
            assertThrows(NullPointerException.class, () -> admin.reassignPartition("orders", 0, null));
        }
    }
}
