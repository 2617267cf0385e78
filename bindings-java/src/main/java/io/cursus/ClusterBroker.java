package io.cursus;

/**
 * One broker of a cluster ({@link CursusAdmin#listCluster()}, {@link ClusterStatus#brokers()}).
 * Broker ids are opaque strings.
 *
 * @param id broker id, e.g. {@code broker-1}
 * @param addr cluster (peer) address, {@code host:port}
 * @param clientAddr address clients connect to, or null when the broker reports none
 * @param status {@code active} or {@code inactive}
 * @param lastSeen when the broker was last heard from (RFC 3339), or null when not reported
 * @param lifecycleProtocol lifecycle protocol version, or null when not reported
 */
public record ClusterBroker(
        String id, String addr, String clientAddr, String status, String lastSeen, Integer lifecycleProtocol) {}
