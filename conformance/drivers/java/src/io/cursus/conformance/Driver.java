package io.cursus.conformance;

import io.cursus.Aggregate;
import io.cursus.Appended;
import io.cursus.ClientConfig;
import io.cursus.ClusterBroker;
import io.cursus.ClusterStatus;
import io.cursus.ConsumerConfig;
import io.cursus.ConsumerRebalanceListener;
import io.cursus.ConsumerRecord;
import io.cursus.CursusAdmin;
import io.cursus.CursusConsumer;
import io.cursus.CursusEventStore;
import io.cursus.CursusException;
import io.cursus.CursusProducer;
import io.cursus.Event;
import io.cursus.EventPage;
import io.cursus.EventPages;
import io.cursus.EventRange;
import io.cursus.LeaderElection;
import io.cursus.NewTopic;
import io.cursus.PageLimits;
import io.cursus.PartitionOffsets;
import io.cursus.PartitionReassignment;
import io.cursus.ProducerConfig;
import io.cursus.ProducerRecord;
import io.cursus.RangeEvent;
import io.cursus.RecordMetadata;
import io.cursus.ReplayProof;
import io.cursus.Snapshot;
import io.cursus.StoredEvent;
import io.cursus.TopicInfo;
import io.cursus.TopicPartition;
import io.cursus.TraceContext;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;

/**
 * Conformance driver of the Java binding: {@code Driver <bootstrap host:port> <plan file>}.
 * Runs the plan's steps through the public {@code io.cursus} API and prints one JSON line
 * per step (see conformance/PROTOCOL.md). Only the binding's public API is used.
 */
public final class Driver {
    /** Ops whose configuration arguments go to the object they open. */
    private static final Set<String> OPENS = Set.of("admin_open", "producer_open", "consumer_open", "es_open");

    private final String bootstrap;
    private final Map<String, CursusAdmin> admins = new HashMap<>();
    private final Map<String, CursusProducer> producers = new HashMap<>();
    private final Map<String, CursusConsumer> consumers = new HashMap<>();
    private final Map<String, CursusEventStore> stores = new HashMap<>();
    /** What each consumer's rebalance listener was told ({@code rebalance_listen}). */
    private final Map<String, List<Object>> rebalanceEvents = new HashMap<>();
    private CursusAdmin implicitAdmin;

    private Driver(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] argv) {
        // stdout carries only the step lines; anything else printed through System.out
        // goes to stderr.
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (argv.length != 2) {
            System.err.println("usage: Driver <bootstrap host:port> <plan file>");
            System.exit(2);
        }
        List<Step> steps;
        try {
            steps = Step.parse(Files.readAllLines(Path.of(argv[1]), StandardCharsets.UTF_8));
        } catch (IOException e) {
            System.err.println("cannot read the plan " + argv[1] + ": " + e);
            System.exit(2);
            return;
        }
        Driver driver = new Driver(argv[0]);
        for (Step step : steps) {
            out.println(driver.execute(step));
            out.flush();
        }
        out.flush();
        // Handles live until the driver exits: nothing is closed that the plan did not close.
        System.exit(0);
    }

    /** Runs one step and renders its output line. */
    private String execute(Step step) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("step", step.index);
        try {
            Map<String, Object> result = run(step);
            line.put("ok", true);
            line.put("result", result);
        } catch (Throwable t) {
            line.put("ok", false);
            line.put("error", error(step, unwrap(t)));
        }
        return Json.write(line);
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static Map<String, Object> error(Step step, Throwable t) {
        Map<String, Object> e = new LinkedHashMap<>();
        if (t instanceof CursusException) {
            CursusException c = (CursusException) t;
            e.put("code", c.code());
            e.put("class", c.errorClass().wireName());
            e.put("retryable", c.isRetryable());
            e.put("fields", new LinkedHashMap<String, Object>(c.fields()));
            return e;
        }
        // Not an error of the binding: a bad plan line, or a Java exception the binding
        // threw outside its error model (reported with its message, and logged).
        e.put("code", "driver_error");
        e.put("class", "internal");
        e.put("retryable", false);
        Map<String, Object> fields = new LinkedHashMap<>();
        if (t instanceof DriverError) {
            System.err.println("step " + step.index + " (" + step.op + "): " + t.getMessage());
            fields.put("detail", t.getMessage());
        } else {
            System.err.println("step " + step.index + " (" + step.op + "): unexpected exception");
            t.printStackTrace();
            fields.put("detail", String.valueOf(t));
        }
        e.put("fields", fields);
        return e;
    }

    /** A plan the driver cannot run as written (unknown handle, malformed line...). */
    static final class DriverError extends Exception {
        private static final long serialVersionUID = 1L;

        DriverError(String message) {
            super(message);
        }
    }

    /** The op's own arguments, with typed accessors. */
    private static final class Args {
        private final Map<String, String> own;

        Args(Map<String, String> own) {
            this.own = own;
        }

        boolean has(String name) {
            return own.containsKey(name);
        }

        String opt(String name) {
            return own.get(name);
        }

        String str(String name) throws DriverError {
            String v = own.get(name);
            if (v == null) {
                throw new DriverError("missing argument " + name);
            }
            return v;
        }

        long num(String name) throws DriverError {
            String v = str(name);
            try {
                return Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new DriverError("argument " + name + " is not a number: " + v);
            }
        }

        int int32(String name) throws DriverError {
            long v = num(name);
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw new DriverError("argument " + name + " out of range: " + v);
            }
            return (int) v;
        }

        boolean flag(String name) throws DriverError {
            String v = str(name);
            if (v.equals("true")) {
                return true;
            }
            if (v.equals("false")) {
                return false;
            }
            throw new DriverError("argument " + name + " is not true/false: " + v);
        }

        byte[] hex(String name) throws DriverError {
            return Driver.hex(name, str(name));
        }

        /** A byte-string argument holding UTF-8 text (the es_* ops' keys, payloads...). */
        String text(String name) throws DriverError {
            return new String(hex(name), StandardCharsets.UTF_8);
        }

        /** An optional byte-string argument holding text; {@code absent} when not given. */
        String text(String name, String absent) throws DriverError {
            return has(name) ? text(name) : absent;
        }
    }

    private Map<String, Object> run(Step step) throws DriverError {
        if (step.malformed != null) {
            throw new DriverError("malformed plan line: " + step.malformed);
        }
        List<Map.Entry<String, String>> config = new ArrayList<>();
        Args a = new Args(step.own(config));
        if (!config.isEmpty() && !OPENS.contains(step.op)) {
            throw new DriverError("unexpected arguments for " + step.op + ": " + config);
        }
        Map<String, Object> r = new LinkedHashMap<>();
        switch (step.op) {
            case "admin_open": {
                ClientConfig.Builder b = ClientConfig.builder().bootstrapServers(bootstrap);
                config.forEach(e -> b.set(e.getKey(), e.getValue()));
                String name = a.str("name");
                admins.put(name, new CursusAdmin(b.build()));
                return r;
            }
            case "admin_close":
                lookup(admins, "admin", a.str("name")).close();
                return r;
            case "create_topic": {
                NewTopic t = NewTopic.named(a.str("topic"));
                if (a.has("partitions")) {
                    t.partitions(a.int32("partitions"));
                }
                if (a.has("auth_policy")) {
                    t.authPolicy(a.str("auth_policy"));
                }
                if (a.has("read_acl")) {
                    t.readAcl(principals(a.str("read_acl")));
                }
                if (a.has("write_acl")) {
                    t.writeAcl(principals(a.str("write_acl")));
                }
                if (a.has("replication_factor")) {
                    t.replicationFactor(a.int32("replication_factor"));
                }
                if (a.has("retention_bytes")) {
                    t.retentionBytes(a.num("retention_bytes"));
                }
                if (a.has("idempotent")) {
                    t.idempotent(a.flag("idempotent"));
                }
                if (a.has("event_sourcing")) {
                    t.eventSourcing(a.flag("event_sourcing"));
                }
                if (a.has("aggregate_replay")) {
                    t.aggregateReplay(a.flag("aggregate_replay"));
                }
                TopicInfo info = admin(a).createTopic(t);
                r.put("partitions", info.partitions());
                return r;
            }
            case "delete_topic": {
                boolean ifExists = a.has("if_exists") && a.flag("if_exists");
                r.put("deleted", admin(a).deleteTopic(a.str("topic"), ifExists).deleted());
                return r;
            }
            case "truncate_topic":
                r.put("revision", admin(a).truncateTopic(a.str("topic"), a.num("expected_revision")).revision());
                return r;
            case "alter_topic": {
                int min = a.int32("min_in_sync_replicas");
                admin(a).alterTopicConfig(a.str("topic"), min == -1 ? null : min);
                return r;
            }
            case "cluster_status": {
                ClusterStatus c = admin(a).clusterStatus();
                Map<String, Object> ledBy = new LinkedHashMap<>();
                for (ClusterStatus.Partition p : c.partitions()) {
                    if (p.leader() != null) {
                        ledBy.put(p.topic() + "/" + p.partition(), p.leader());
                    }
                }
                r.put("brokers", c.brokers().size());
                r.put("partitions", c.partitions().size());
                r.put("raft_leader", c.raftLeader());
                r.put("leaderless", c.leaderless());
                r.put("under_replicated", c.underReplicated());
                r.put("led_by", ledBy);
                Map<String, Object> producers = new LinkedHashMap<>();
                for (ClusterStatus.Partition p : c.partitions()) {
                    producers.put(p.topic() + "/" + p.partition(), p.producers());
                }
                r.put("voters", c.voters());
                r.put("learners", c.learners());
                r.put("transaction_coordinator_shards", c.transactionCoordinatorShards());
                r.put("producers", producers);
                return r;
            }
            case "elect_leader": {
                LeaderElection e = admin(a).electLeader(a.str("topic"), a.int32("partition"), a.str("broker"));
                r.put("previous_leader", e.previousLeader());
                r.put("leader", e.leader());
                r.put("leader_epoch", e.leaderEpoch());
                r.put("changed", e.changed());
                return r;
            }
            case "reassign_partition": {
                PartitionReassignment m = admin(a).reassignPartition(
                        a.str("topic"), a.int32("partition"), Arrays.asList(a.str("replicas").split(",")));
                r.put("done", m.done());
                r.put("replicas", new ArrayList<Object>(m.replicas()));
                r.put("isr", new ArrayList<Object>(m.isr()));
                r.put("leader", m.leader());
                r.put("target", new ArrayList<Object>(m.target()));
                return r;
            }
            case "list_cluster": {
                List<Object> ids = new ArrayList<>();
                for (ClusterBroker b : admin(a).listCluster()) {
                    ids.add(b.id());
                }
                r.put("brokers", ids);
                return r;
            }
            case "list_topics":
                r.put("topics", new ArrayList<Object>(admin(a).listTopics()));
                return r;
            case "describe_topic":
                r.put("partitions", admin(a).describeTopic(a.str("topic")).partitions().size());
                return r;
            case "list_offsets": {
                PartitionOffsets o = offsets(admin(a), a.str("topic"), a.int32("partition"));
                r.put("earliest", o.earliest());
                r.put("latest", o.latest());
                return r;
            }
            case "await_earliest":
                return awaitEarliest(a);
            case "producer_open": {
                ProducerConfig.Builder b = ProducerConfig.builder().bootstrapServers(bootstrap);
                config.forEach(e -> b.set(e.getKey(), e.getValue()));
                String name = a.str("name");
                producers.put(name, new CursusProducer(b.build()));
                return r;
            }
            case "produce":
                return produce(a);
            case "produce_many":
                return produceMany(a);
            case "flush":
                lookup(producers, "producer", a.str("producer")).flush();
                return r;
            case "producer_close":
                lookup(producers, "producer", a.str("name")).close();
                return r;
            case "consumer_open": {
                ConsumerConfig.Builder b = ConsumerConfig.builder().bootstrapServers(bootstrap);
                config.forEach(e -> b.set(e.getKey(), e.getValue()));
                String name = a.str("name");
                consumers.put(name, new CursusConsumer(b.build()));
                return r;
            }
            case "subscribe": {
                CursusConsumer c = lookup(consumers, "consumer", a.str("consumer"));
                if (a.has("pattern")) {
                    c.subscribePattern(a.str("pattern"));
                } else {
                    String topics = a.str("topics");
                    c.subscribe(topics.isEmpty() ? List.of() : Arrays.asList(topics.split(",")));
                }
                return r;
            }
            case "poll":
                return poll(a, false);
            case "take":
                return poll(a, true);
            case "poll_once":
                return pollOnce(a);
            case "wakeup":
                lookup(consumers, "consumer", a.str("consumer")).wakeup();
                return r;
            case "commit":
                lookup(consumers, "consumer", a.str("consumer")).commitSync();
                return r;
            case "commit_offsets": {
                CursusConsumer c = lookup(consumers, "consumer", a.str("consumer"));
                TopicPartition tp = new TopicPartition(a.str("topic"), a.int32("partition"));
                c.commitSync(Map.of(tp, a.num("offset")));
                return r;
            }
            case "committed": {
                CursusConsumer c = lookup(consumers, "consumer", a.str("consumer"));
                OptionalLong v = c.committed(new TopicPartition(a.str("topic"), a.int32("partition")));
                r.put("offset", v.isPresent() ? (Object) v.getAsLong() : null);
                return r;
            }
            case "assignment": {
                List<Object> parts = new ArrayList<>();
                for (TopicPartition tp : lookup(consumers, "consumer", a.str("consumer")).assignment()) {
                    parts.add(tp.topic() + ":" + tp.partition());
                }
                r.put("partitions", parts);
                return r;
            }
            case "consumer_close":
                lookup(consumers, "consumer", a.str("name")).close();
                return r;
            case "txn_init":
                lookup(producers, "producer", a.str("producer")).initTransactions().join();
                return r;
            case "txn_begin":
                lookup(producers, "producer", a.str("producer")).beginTransaction().join();
                return r;
            case "seek":
                consumer(a).seek(new TopicPartition(a.str("topic"), a.int32("partition")), a.num("offset"));
                return r;
            case "position":
                r.put("offset", consumer(a).position(new TopicPartition(a.str("topic"), a.int32("partition"))));
                return r;
            case "pause":
                consumer(a).pause(partitionList(a.str("partitions")));
                return r;
            case "resume":
                consumer(a).resume(partitionList(a.str("partitions")));
                return r;
            case "paused": {
                List<Object> names = new ArrayList<>();
                consumer(a).paused().forEach(tp -> names.add(tpName(tp)));
                r.put("partitions", names);
                return r;
            }
            case "committed_list": {
                List<TopicPartition> asked = partitionList(a.str("partitions"));
                Map<TopicPartition, Long> committed = consumer(a).committed(new LinkedHashSet<>(asked));
                List<Object> offsets = new ArrayList<>();
                asked.forEach(tp -> offsets.add(committed.get(tp)));
                r.put("committed", offsets);
                return r;
            }
            case "rebalance_listen":
                return rebalanceListen(a);
            case "rebalance_events": {
                String name = a.str("consumer");
                List<Object> events = rebalanceEvents.get(name);
                if (events == null) {
                    throw new DriverError("no rebalance listener on consumer " + name);
                }
                r.put("events", new ArrayList<>(events));
                return r;
            }
            case "txn_send_offsets": {
                CursusProducer p = lookup(producers, "producer", a.str("producer"));
                CursusConsumer c = lookup(consumers, "consumer", a.str("consumer"));
                p.sendOffsetsToTransaction(c).join();
                return r;
            }
            case "txn_commit":
                lookup(producers, "producer", a.str("producer")).commitTransaction().join();
                return r;
            case "txn_abort":
                lookup(producers, "producer", a.str("producer")).abortTransaction().join();
                return r;
            case "es_open": {
                ClientConfig.Builder b = ClientConfig.builder().bootstrapServers(bootstrap);
                config.forEach(e -> b.set(e.getKey(), e.getValue()));
                String name = a.str("name");
                stores.put(name, new CursusEventStore(b.build()));
                return r;
            }
            case "es_close":
                lookup(stores, "store", a.str("name")).close();
                return r;
            case "es_append":
            case "es_append_id": {
                Event event = new Event(a.has("event_type") ? a.str("event_type") : "", a.text("value"),
                        a.text("metadata", ""), a.has("schema_version") ? a.int32("schema_version") : 0);
                if (step.op.equals("es_append_id")) {
                    event = event.withEventId(a.str("event_id"));
                }
                return appended(store(a).append(a.str("topic"), a.text("key"), a.num("expected_version"), event));
            }
            case "es_replay_proof": {
                CursusEventStore s = store(a);
                ReplayProof proof = a.has("expected_last_sequence")
                        ? s.replayProof(a.str("topic"), a.text("key"), a.num("expected_last_sequence"))
                        : s.replayProof(a.str("topic"), a.text("key"));
                r.put("status", proof.status());
                r.put("event_count", proof.eventCount());
                r.put("earliest_sequence", proof.earliestRetainedSequence());
                r.put("latest_sequence", proof.latestRetainedSequence());
                r.put("first_event_id", proof.firstEventId());
                r.put("last_event_id", proof.lastEventId());
                r.put("sequence_complete", proof.sequenceComplete());
                r.put("retention_complete", proof.retentionCompleteFromSequenceOne());
                return r;
            }
            case "es_event_range": {
                EventRange range = store(a).eventRange(a.str("topic"), a.text("key"), a.num("from_sequence"),
                        a.num("to_sequence"), a.has("max_records") ? a.int32("max_records") : 0);
                List<Object> records = new ArrayList<>();
                for (RangeEvent e : range.events()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("offset", e.offset());
                    m.put("version", e.sequence());
                    m.put("event_id", e.eventId());
                    m.put("event_type", e.eventType());
                    m.put("value", hex(e.payloadBytes()));
                    records.add(m);
                }
                r.put("status", range.proof().status());
                r.put("records", records);
                return r;
            }
            case "txn_append_stream": {
                Event event = Event.of(a.has("event_type") ? a.str("event_type") : "", a.text("value"))
                        .withEventId(a.opt("event_id"));
                CursusProducer p = lookup(producers, "producer", a.str("producer"));
                return appended(p.appendStream(a.str("topic"), a.text("key"), a.num("expected_version"), event));
            }
            case "es_stream_version":
                r.put("version", store(a).streamVersion(a.str("topic"), a.text("key")));
                return r;
            case "es_save_snapshot":
                store(a).saveSnapshot(a.str("topic"), a.text("key"), a.num("version"), a.text("state"));
                return r;
            case "es_read_snapshot":
                r.put("snapshot", snapshot(store(a).readSnapshot(a.str("topic"), a.text("key"))));
                return r;
            case "es_read_stream": {
                PageLimits limits = PageLimits.ofRecords(a.has("max_events") ? a.int32("max_events") : 0);
                EventPages read = store(a).stream(a.str("topic"), a.text("key"), a.num("from_version"), limits);
                return pages(read, true, false);
            }
            case "es_history": {
                PageLimits limits = PageLimits.ofRecords(a.has("max_records") ? a.int32("max_records") : 0);
                EventPages read = store(a).history(a.str("topic"), a.text("key"), a.num("from_version"),
                        a.has("to_version") ? a.num("to_version") : 0, limits);
                return pages(read, false, true);
            }
            case "es_browse": {
                PageLimits limits = PageLimits.ofRecords(a.has("max_records") ? a.int32("max_records") : 0);
                EventPages read = store(a).browse(a.str("topic"), a.int32("partition"), a.num("from_offset"),
                        a.has("to_offset") ? a.num("to_offset") : -1, limits);
                return pages(read, false, false);
            }
            case "es_aggregate":
                return aggregate(a);
            default:
                throw new DriverError("unknown op " + step.op);
        }
    }

    /**
     * A named handle. Closed handles stay registered, so using one reaches the binding
     * (which reports its own {@code closed} error).
     */
    private static <T> T lookup(Map<String, T> handles, String what, String name) throws DriverError {
        T h = handles.get(name);
        if (h == null) {
            throw new DriverError("unknown " + what + " handle " + name);
        }
        return h;
    }

    private static Map<String, Object> appended(Appended appended) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("version", appended.version());
        r.put("offset", appended.offset());
        r.put("partition", appended.partition());
        return r;
    }

    /** The {@code store=} handle. */
    private CursusEventStore store(Args a) throws DriverError {
        return lookup(stores, "store", a.str("store"));
    }

    private static Object snapshot(Optional<Snapshot> snapshot) {
        if (snapshot.isEmpty()) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", snapshot.get().version());
        m.put("state", hex(snapshot.get().state().getBytes(StandardCharsets.UTF_8)));
        return m;
    }

    private static Map<String, Object> event(StoredEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", e.topic());
        m.put("partition", e.partition());
        m.put("offset", e.offset());
        m.put("key", e.keyBytes().length == 0 ? null : hex(e.keyBytes()));
        m.put("value", hex(e.payloadBytes()));
        m.put("version", e.version());
        m.put("event_type", e.eventType());
        m.put("schema_version", e.schemaVersion());
        m.put("metadata", hex(e.metadata().getBytes(StandardCharsets.UTF_8)));
        return m;
    }

    /**
     * Every page of a paged read: the records and the page count, with the first page's
     * snapshot ({@code withSnapshot}) or the last page's completeness and head version
     * ({@code withHistory}).
     */
    private static Map<String, Object> pages(EventPages read, boolean withSnapshot, boolean withHistory)
            throws DriverError {
        List<Object> records = new ArrayList<>();
        Optional<Snapshot> first = Optional.empty();
        EventPage last = null;
        int pages = 0;
        for (EventPage page : read) {
            if (pages == 0) {
                first = page.snapshot();
            }
            pages++;
            last = page;
            page.events().forEach(e -> records.add(event(e)));
        }
        Map<String, Object> r = new LinkedHashMap<>();
        if (withSnapshot) {
            r.put("snapshot", snapshot(first));
        }
        r.put("records", records);
        if (withHistory) {
            if (last == null) {
                throw new DriverError("es_history: no page");
            }
            r.put("completeness", last.completeness() == null ? null : last.completeness().wireName());
            r.put("head_version", last.headVersion());
        }
        r.put("pages", pages);
        return r;
    }

    /** The aggregate cycle with a counter as state (PROTOCOL.md, {@code es_aggregate}). */
    private Map<String, Object> aggregate(Args a) throws DriverError {
        String prefix = a.text("value_prefix");
        long appends = a.num("appends");
        Aggregate<Long> counter = store(a).loadAggregate(a.str("topic"), a.text("key"), 0L, (n, e) -> n + 1,
                Long::valueOf, String::valueOf, a.int32("snapshot_every"));
        Object lastOffset = null;
        for (long i = 0; i < appends; i++) {
            Event event = Event.of("Counted", prefix + i);
            if (a.has("event_id_prefix")) {
                event = event.withEventId(a.str("event_id_prefix") + i);
            }
            lastOffset = counter.append(event).offset();
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("version", counter.version());
        r.put("state", counter.state());
        r.put("loaded_snapshot_version", counter.loadedSnapshot().map(s -> (Object) s.version()).orElse(null));
        r.put("loaded_events", counter.loadedEvents());
        r.put("last_offset", lastOffset);
        return r;
    }

    /** The {@code admin=} handle, or the implicit admin (opened on first use). */
    private CursusAdmin admin(Args a) throws DriverError {
        if (a.has("admin")) {
            return lookup(admins, "admin", a.str("admin"));
        }
        if (implicitAdmin == null) {
            implicitAdmin = new CursusAdmin(ClientConfig.builder().bootstrapServers(bootstrap).build());
        }
        return implicitAdmin;
    }

    /** A comma-separated list of principals ({@code read_acl}, {@code write_acl}). */
    private static List<String> principals(String csv) {
        List<String> out = new ArrayList<>();
        for (String p : csv.split(",")) {
            if (!p.isBlank()) {
                out.add(p.strip());
            }
        }
        return out;
    }

    private static PartitionOffsets offsets(CursusAdmin admin, String topic, int partition) throws DriverError {
        for (PartitionOffsets o : admin.listOffsets(topic, partition)) {
            if (o.partition() == partition) {
                return o;
            }
        }
        throw new DriverError("list_offsets returned no entry for partition " + partition);
    }

    private Map<String, Object> awaitEarliest(Args a) throws DriverError {
        CursusAdmin admin = admin(a);
        String topic = a.str("topic");
        int partition = a.int32("partition");
        long min = a.num("min");
        long deadline = System.nanoTime() + a.num("timeout_ms") * 1_000_000L;
        long earliest;
        while (true) {
            earliest = offsets(admin, topic, partition).earliest();
            long left = deadline - System.nanoTime();
            if (earliest >= min || left <= 0) {
                break;
            }
            sleepMillis(Math.min(50, (left + 999_999) / 1_000_000));
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("earliest", earliest);
        return r;
    }

    private Map<String, Object> produce(Args a) throws DriverError {
        CursusProducer p = lookup(producers, "producer", a.str("producer"));
        byte[] value;
        if (a.has("value")) {
            value = a.hex("value");
        } else {
            byte[] fill = a.hex("value_fill");
            if (fill.length != 1) {
                throw new DriverError("value_fill must be one byte");
            }
            long len = a.num("value_len");
            if (len < 0 || len > Integer.MAX_VALUE - 8) {
                throw new DriverError("value_len out of range: " + len);
            }
            value = new byte[(int) len];
            Arrays.fill(value, fill[0]);
        }
        ProducerRecord rec = ProducerRecord.of(a.str("topic"), value);
        if (a.has("key")) {
            rec = rec.withKey(a.hex("key"));
        }
        if (a.has("partition")) {
            rec = rec.withPartition(a.int32("partition"));
        }
        if (a.has("timestamp")) {
            rec = rec.withTimestamp(a.num("timestamp"));
        }
        if (a.has("metadata")) {
            rec = rec.withMetadata(a.text("metadata"));
        }
        if (a.has("traceparent") || a.has("tracestate")) {
            // A malformed context fails here, where the Java API checks it (the binding's
            // invalid_trace_context); a tracestate alone is an empty, refused traceparent.
            rec = rec.withTraceContext(TraceContext.of(a.has("traceparent") ? a.str("traceparent") : "",
                    a.has("tracestate") ? a.str("tracestate") : null));
        }
        RecordMetadata md = p.sendAndWait(rec);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("partition", md.partition());
        r.put("offset", md.hasOffset() ? (Object) md.offset() : null);
        r.put("timestamp", md.timestamp());
        return r;
    }

    private Map<String, Object> produceMany(Args a) throws DriverError {
        CursusProducer p = lookup(producers, "producer", a.str("producer"));
        String topic = a.str("topic");
        long count = a.num("count");
        byte[] valuePrefix = a.hex("value_prefix");
        byte[] keyPrefix = a.has("key_prefix") ? a.hex("key_prefix") : null;
        List<CompletableFuture<RecordMetadata>> futures = new ArrayList<>();
        RuntimeException sendError = null;
        for (long i = 0; i < count; i++) {
            byte[] suffix = Long.toString(i).getBytes(StandardCharsets.US_ASCII);
            ProducerRecord rec = ProducerRecord.of(topic, concat(valuePrefix, suffix));
            if (keyPrefix != null) {
                rec = rec.withKey(concat(keyPrefix, suffix));
            }
            try {
                futures.add(p.send(rec));
            } catch (RuntimeException e) {
                // Queueing failed: this record's delivery failed; earlier ones still count first.
                sendError = e;
                break;
            }
        }
        RuntimeException flushError = null;
        try {
            p.flush();
        } catch (RuntimeException e) {
            flushError = e;
        }
        if (flushError != null && sendError == null) {
            throw flushError;
        }
        List<Object> partitions = new ArrayList<>();
        for (CompletableFuture<RecordMetadata> f : futures) {
            partitions.add(f.join().partition());
        }
        if (sendError != null) {
            throw sendError;
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("count", futures.size());
        r.put("partitions", partitions);
        return r;
    }

    private CursusConsumer consumer(Args a) throws DriverError {
        return lookup(consumers, "consumer", a.str("consumer"));
    }

    private static String tpName(TopicPartition tp) {
        return tp.topic() + ":" + tp.partition();
    }

    /** {@code topic:p,topic:p} as partitions, in order. */
    private static List<TopicPartition> partitionList(String text) throws DriverError {
        List<TopicPartition> out = new ArrayList<>();
        for (String item : text.split(",")) {
            int colon = item.lastIndexOf(':');
            if (colon < 0) {
                throw new DriverError("not topic:partition: " + item);
            }
            try {
                out.add(new TopicPartition(item.substring(0, colon), Integer.parseInt(item.substring(colon + 1))));
            } catch (IllegalArgumentException e) {
                throw new DriverError("bad partition in " + item);
            }
        }
        return out;
    }

    /**
     * Installs a rebalance listener that records every event (PROTOCOL.md,
     * {@code rebalance_listen}): seeks on {@code assigned} with {@code seek_to}, commits on
     * {@code revoked} with {@code commit_on_revoke=true}.
     */
    private Map<String, Object> rebalanceListen(Args a) throws DriverError {
        String name = a.str("consumer");
        CursusConsumer c = lookup(consumers, "consumer", name);
        long seekTo = a.has("seek_to") ? a.num("seek_to") : -1;
        boolean commit = a.has("commit_on_revoke") && a.flag("commit_on_revoke");
        List<Object> events = rebalanceEvents.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>());
        c.setRebalanceListener(new ConsumerRebalanceListener() {
            private Map<String, Object> entry(String kind, Collection<TopicPartition> partitions) {
                List<String> names = new ArrayList<>();
                partitions.forEach(tp -> names.add(tpName(tp)));
                Collections.sort(names);
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("kind", kind);
                e.put("partitions", new ArrayList<Object>(names));
                return e;
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                if (seekTo >= 0) {
                    for (TopicPartition tp : partitions) {
                        c.seek(tp, seekTo);
                    }
                }
                events.add(entry("assigned", partitions));
            }

            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                Map<String, Object> e = entry("revoked", partitions);
                if (commit) {
                    try {
                        c.commitSync();
                    } catch (CursusException failed) {
                        e.put("commit_error", failed.code());
                    }
                }
                events.add(e);
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                events.add(entry("lost", partitions));
            }
        });
        return new LinkedHashMap<>();
    }

    /** {@code poll}, or {@code take} ({@code exact}): each poll asks for at most what is still wanted. */
    private Map<String, Object> poll(Args a, boolean exact) throws DriverError {
        CursusConsumer c = lookup(consumers, "consumer", a.str("consumer"));
        long count = a.num("count");
        long deadline = System.nanoTime() + a.num("timeout_ms") * 1_000_000L;
        List<Object> records = new ArrayList<>();
        do {
            long left = Math.max(0, (deadline - System.nanoTime() + 999_999) / 1_000_000);
            List<ConsumerRecord> polled = exact
                    ? c.poll(Duration.ofMillis(left), (int) Math.max(1, count - records.size()))
                    : c.poll(Duration.ofMillis(left));
            for (ConsumerRecord rec : polled) {
                records.add(recordJson(rec));
            }
        } while (records.size() < Math.max(count, 1) && System.nanoTime() < deadline);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("records", records);
        return r;
    }

    /** One call of poll: empty before its deadline only when woken. */
    private Map<String, Object> pollOnce(Args a) throws DriverError {
        CursusConsumer c = lookup(consumers, "consumer", a.str("consumer"));
        long timeoutMs = a.num("timeout_ms");
        long start = System.nanoTime();
        List<ConsumerRecord> polled = c.poll(Duration.ofMillis(timeoutMs));
        boolean earlyEmpty = polled.isEmpty() && System.nanoTime() - start < timeoutMs * 1_000_000L;
        List<Object> records = new ArrayList<>();
        for (ConsumerRecord rec : polled) {
            records.add(recordJson(rec));
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("records", records);
        r.put("early_empty", earlyEmpty);
        return r;
    }

    /** A polled record as the protocol's record object. */
    private static Map<String, Object> recordJson(ConsumerRecord rec) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", rec.topic());
        m.put("partition", rec.partition());
        m.put("offset", rec.offset());
        m.put("key", rec.key() == null ? null : hex(rec.key()));
        m.put("value", hex(rec.value()));
        m.put("timestamp", rec.timestamp());
        m.put("metadata", rec.metadata() == null ? null
                : hex(rec.metadata().getBytes(StandardCharsets.UTF_8)));
        m.put("event_type", rec.eventType());
        m.put("aggregate_version", rec.isEvent() ? (Object) rec.aggregateVersion() : null);
        Optional<TraceContext> tc = rec.traceContext();
        m.put("traceparent", tc.map(TraceContext::traceparent).orElse(null));
        m.put("tracestate", tc.map(TraceContext::tracestate).orElse(null));
        return m;
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static String hex(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[bytes[i] & 0xf];
        }
        return new String(out);
    }

    static byte[] hex(String name, String s) throws DriverError {
        if (s.length() % 2 != 0) {
            throw new DriverError("argument " + name + " is not hex: " + s);
        }
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16);
            int lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new DriverError("argument " + name + " is not hex: " + s);
            }
            out[i] = (byte) (hi << 4 | lo);
        }
        return out;
    }
}
