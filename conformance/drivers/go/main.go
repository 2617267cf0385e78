// Command cursus-conformance-go is the conformance driver for the Go binding
// (package cursus, example.invalid/cursus-sdk/go, in ffi-c/go).
//
//	usage: cursus-conformance-go <bootstrap host:port> <plan file>
//
// It runs each plan step through the package's public API and prints one
// JSON line per step on stdout. The contract is conformance/PROTOCOL.md; the
// harness compares the results. Errors are the package's *cursus.Error
// (errors.As); a failed step never stops the plan.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cursus "example.invalid/cursus-sdk/go"
)

// configPrefix marks configuration arguments (PROTOCOL.md, "Plan file").
const configPrefix = "config."

// driverError is a fault of the plan or of the driver, reported as
// driver_error (never a binding error).
type driverError struct{ msg string }

func (e *driverError) Error() string { return e.msg }

func fail(format string, args ...any) error { return &driverError{fmt.Sprintf(format, args...)} }

// step is one plan line.
type step struct {
	op     string
	args   map[string]string
	config []cursus.Option // bootstrap_servers is added first by the driver
}

func parseStep(line string) (*step, error) {
	words := strings.Fields(line)
	s := &step{op: words[0], args: map[string]string{}}
	for _, w := range words[1:] {
		name, value, ok := strings.Cut(w, "=")
		if !ok || name == "" {
			return nil, fail("argument without name=value: %s", w)
		}
		if option, ok := strings.CutPrefix(name, configPrefix); ok {
			s.config = append(s.config, cursus.WithOption(option, value))
		} else {
			s.args[name] = value
		}
	}
	return s, nil
}

func (s *step) arg(name string) (string, error) {
	v, ok := s.args[name]
	if !ok {
		return "", fail("%s: missing argument %s", s.op, name)
	}
	return v, nil
}

func (s *step) num(name string) (int64, error) {
	v, err := s.arg(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fail("%s: %s=%s is not a number", s.op, name, v)
	}
	return n, nil
}

func (s *step) unsigned(name string, bits int) (uint64, error) {
	v, err := s.arg(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(v, 10, bits)
	if err != nil {
		return 0, fail("%s: %s=%s is not an unsigned number", s.op, name, v)
	}
	return n, nil
}

// bytes decodes a hex argument; nil when absent (an empty value is non-nil).
func (s *step) bytes(name string) ([]byte, error) {
	v, ok := s.args[name]
	if !ok {
		return nil, nil
	}
	b, err := hex.DecodeString(v)
	if err != nil {
		return nil, fail("%s: %s is not hex", s.op, name)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// result is a step's result object.
type result map[string]any

// record is one polled record, fields in the protocol's order.
type record struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Key       *string `json:"key"`
	Value     string  `json:"value"`
	// Timestamp is in milliseconds since the epoch.
	Timestamp        int64   `json:"timestamp"`
	Metadata         *string `json:"metadata"`
	Traceparent      *string `json:"traceparent"`
	Tracestate       *string `json:"tracestate"`
	EventType        *string `json:"event_type"`
	AggregateVersion *int64  `json:"aggregate_version"`
}

type driver struct {
	bootstrap string
	admins    map[string]*cursus.Admin
	producers map[string]*cursus.Producer
	consumers map[string]*cursus.Consumer
	stores    map[string]*cursus.EventStore
	// rebalance holds what each consumer's rebalance listener was told
	// (rebalance_listen), kept after consumer_close.
	rebalance map[string]*eventLog
}

// eventLog is the events a rebalance listener appended (it runs on the
// consumer's listener thread while the driver's poll waits).
type eventLog struct {
	mu     sync.Mutex
	events []map[string]any
}

func (d *driver) options(s *step) []cursus.Option {
	return append([]cursus.Option{cursus.WithBootstrap(d.bootstrap)}, s.config...)
}

// admin returns the admin named by admin=, or the implicit one (opened on
// first use with only bootstrap_servers).
func (d *driver) admin(ctx context.Context, s *step) (*cursus.Admin, error) {
	name, named := s.args["admin"]
	if named {
		if a, ok := d.admins[name]; ok {
			return a, nil
		}
		return nil, fail("no admin named %s", name)
	}
	if a, ok := d.admins[""]; ok {
		return a, nil
	}
	a, err := cursus.NewAdmin(ctx, cursus.WithBootstrap(d.bootstrap))
	if err != nil {
		return nil, err
	}
	d.admins[""] = a
	return a, nil
}

func lookup[T any](table map[string]*T, s *step, argName, kind string) (*T, error) {
	name, err := s.arg(argName)
	if err != nil {
		return nil, err
	}
	h, ok := table[name]
	if !ok {
		return nil, fail("no %s named %s", kind, name)
	}
	return h, nil
}

func (d *driver) run(s *step) (result, error) {
	ctx := context.Background()
	switch s.op {
	case "admin_open":
		name, err := s.arg("name")
		if err != nil {
			return nil, err
		}
		a, err := cursus.NewAdmin(ctx, d.options(s)...)
		if err != nil {
			return nil, err
		}
		d.admins[name] = a
		return result{}, nil
	case "admin_close":
		a, err := lookup(d.admins, s, "name", "admin")
		if err != nil {
			return nil, err
		}
		return result{}, a.Close()
	case "create_topic":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		partitions, err := s.arg("partitions")
		if err != nil {
			return nil, err
		}
		opts := cursus.TopicOptions{"partitions": partitions}
		// read_acl / write_acl: comma-separated principals, as TopicOptions takes them.
		for _, field := range []string{"replication_factor", "auth_policy", "read_acl", "write_acl", "retention_bytes",
			"idempotent", "event_sourcing", "aggregate_replay"} {
			if v, ok := s.args[field]; ok {
				opts[field] = v
			}
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		md, err := a.CreateTopicWithOptions(ctx, topic, opts)
		if err != nil {
			return nil, err
		}
		return result{"partitions": md.Partitions}, nil
	case "delete_topic":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		deleted, err := a.DeleteTopic(ctx, topic, s.args["if_exists"] == "true")
		if err != nil {
			return nil, err
		}
		return result{"deleted": deleted.Deleted}, nil
	case "truncate_topic":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		revision, err := s.unsigned("expected_revision", 64)
		if err != nil {
			return nil, err
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		r, err := a.TruncateTopic(ctx, topic, revision)
		if err != nil {
			return nil, err
		}
		return result{"revision": r.Revision}, nil
	case "alter_topic":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		min, err := s.num("min_in_sync_replicas")
		if err != nil {
			return nil, err
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		_, err = a.AlterTopicConfig(ctx, topic, min)
		return result{}, err
	case "cluster_status":
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		c, err := a.ClusterStatus(ctx)
		if err != nil {
			return nil, err
		}
		ledBy := map[string]string{}
		for _, p := range c.Partitions {
			if p.Leader != "" {
				ledBy[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.Leader
			}
		}
		var raftLeader any
		if c.RaftLeader != "" {
			raftLeader = c.RaftLeader
		}
		producers := map[string]uint64{}
		for _, p := range c.Partitions {
			producers[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.Producers
		}
		var shards any
		if c.TransactionCoordinatorShards >= 0 {
			shards = c.TransactionCoordinatorShards
		}
		return result{"brokers": len(c.Brokers), "partitions": len(c.Partitions), "raft_leader": raftLeader,
			"leaderless": c.Leaderless, "under_replicated": c.UnderReplicated, "led_by": ledBy,
			"voters": c.Voters, "learners": c.Learners, "transaction_coordinator_shards": shards,
			"producers": producers}, nil
	case "elect_leader":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		partition, err := s.unsigned("partition", 32)
		if err != nil {
			return nil, err
		}
		brokerID, err := s.arg("broker")
		if err != nil {
			return nil, err
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		e, err := a.ElectLeader(ctx, topic, uint32(partition), brokerID)
		if err != nil {
			return nil, err
		}
		var previous any
		if e.PreviousLeader != "" {
			previous = e.PreviousLeader
		}
		return result{"previous_leader": previous, "leader": e.Leader, "leader_epoch": e.LeaderEpoch,
			"changed": e.Changed}, nil
	case "reassign_partition":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		partition, err := s.unsigned("partition", 32)
		if err != nil {
			return nil, err
		}
		replicas, err := s.arg("replicas")
		if err != nil {
			return nil, err
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		r, err := a.ReassignPartition(ctx, topic, uint32(partition), strings.Split(replicas, ",")...)
		if err != nil {
			return nil, err
		}
		var leader any
		if r.Leader != "" {
			leader = r.Leader
		}
		return result{"done": r.Done, "replicas": r.Replicas, "isr": r.ISR, "leader": leader,
			"target": r.Target}, nil
	case "list_cluster":
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		brokers, err := a.ListCluster(ctx)
		if err != nil {
			return nil, err
		}
		ids := []string{}
		for _, b := range brokers {
			ids = append(ids, b.ID)
		}
		return result{"brokers": ids}, nil
	case "list_topics":
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		topics, err := a.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		if topics == nil {
			topics = []string{}
		}
		return result{"topics": topics}, nil
	case "describe_topic":
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		a, err := d.admin(ctx, s)
		if err != nil {
			return nil, err
		}
		described, err := a.DescribeTopic(ctx, topic)
		if err != nil {
			return nil, err
		}
		return result{"partitions": len(described.Partitions)}, nil
	case "list_offsets":
		o, err := d.offsets(ctx, s)
		if err != nil {
			return nil, err
		}
		return result{"earliest": o.Earliest, "latest": o.Latest}, nil
	case "await_earliest":
		min, err := s.unsigned("min", 64)
		if err != nil {
			return nil, err
		}
		timeout, err := s.num("timeout_ms")
		if err != nil {
			return nil, err
		}
		deadline := time.Now().Add(time.Duration(timeout) * time.Millisecond)
		for {
			o, err := d.offsets(ctx, s)
			if err != nil {
				return nil, err
			}
			left := time.Until(deadline)
			if o.Earliest >= min || left <= 0 {
				return result{"earliest": o.Earliest}, nil
			}
			time.Sleep(min64(left, 50*time.Millisecond))
		}
	case "producer_open":
		name, err := s.arg("name")
		if err != nil {
			return nil, err
		}
		p, err := cursus.NewProducer(ctx, d.options(s)...)
		if err != nil {
			return nil, err
		}
		d.producers[name] = p
		return result{}, nil
	case "produce":
		return d.produce(ctx, s)
	case "produce_many":
		return d.produceMany(ctx, s)
	case "flush":
		p, err := lookup(d.producers, s, "producer", "producer")
		if err != nil {
			return nil, err
		}
		return result{}, p.Flush(ctx)
	case "producer_close":
		p, err := lookup(d.producers, s, "name", "producer")
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return result{}, p.Close(cctx)
	case "consumer_open":
		name, err := s.arg("name")
		if err != nil {
			return nil, err
		}
		c, err := cursus.NewConsumer(ctx, d.options(s)...)
		if err != nil {
			return nil, err
		}
		d.consumers[name] = c
		return result{}, nil
	case "subscribe":
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		if pattern, ok := s.args["pattern"]; ok {
			return result{}, c.SubscribePattern(ctx, pattern)
		}
		topics, err := s.arg("topics")
		if err != nil {
			return nil, err
		}
		return result{}, c.Subscribe(ctx, strings.Split(topics, ",")...)
	case "poll":
		return d.poll(s, false)
	case "take":
		return d.poll(s, true)
	case "poll_once":
		return d.pollOnce(s)
	case "wakeup":
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		return result{}, c.Wakeup()
	case "commit":
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		return result{}, c.Commit(ctx)
	case "commit_offsets":
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		tp, err := topicPartition(s)
		if err != nil {
			return nil, err
		}
		offset, err := s.num("offset")
		if err != nil {
			return nil, err
		}
		return result{}, c.CommitOffsets(ctx, map[cursus.TopicPartition]int64{tp: offset})
	case "committed":
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		tp, err := topicPartition(s)
		if err != nil {
			return nil, err
		}
		offset, found, err := c.Committed(ctx, tp.Topic, tp.Partition)
		if err != nil {
			return nil, err
		}
		if !found {
			return result{"offset": nil}, nil
		}
		return result{"offset": offset}, nil
	case "assignment":
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		tps, err := c.Assignment(ctx)
		if err != nil {
			return nil, err
		}
		parts := []string{}
		for _, tp := range tps {
			parts = append(parts, fmt.Sprintf("%s:%d", tp.Topic, tp.Partition))
		}
		return result{"partitions": parts}, nil
	case "consumer_close":
		c, err := lookup(d.consumers, s, "name", "consumer")
		if err != nil {
			return nil, err
		}
		return result{}, c.Close()
	case "seek", "position", "pause", "resume", "paused", "committed_list", "rebalance_listen", "rebalance_events":
		return d.control(ctx, s)
	case "txn_init", "txn_begin", "txn_commit", "txn_abort":
		p, err := lookup(d.producers, s, "producer", "producer")
		if err != nil {
			return nil, err
		}
		call := map[string]func(context.Context) error{
			"txn_init":   p.InitTransactions,
			"txn_begin":  p.BeginTransaction,
			"txn_commit": p.CommitTransaction,
			"txn_abort":  p.AbortTransaction,
		}[s.op]
		return result{}, call(ctx)
	case "txn_append_stream":
		p, err := lookup(d.producers, s, "producer", "producer")
		if err != nil {
			return nil, err
		}
		topic, err := s.arg("topic")
		if err != nil {
			return nil, err
		}
		key, err := s.text("key")
		if err != nil {
			return nil, err
		}
		expected, err := s.unsigned("expected_version", 64)
		if err != nil {
			return nil, err
		}
		ev, err := s.event()
		if err != nil {
			return nil, err
		}
		a, err := p.AppendStream(ctx, topic, key, expected, ev)
		if err != nil {
			return nil, err
		}
		return appendedJSON(a), nil
	case "txn_send_offsets":
		p, err := lookup(d.producers, s, "producer", "producer")
		if err != nil {
			return nil, err
		}
		c, err := lookup(d.consumers, s, "consumer", "consumer")
		if err != nil {
			return nil, err
		}
		return result{}, p.SendOffsetsToTransaction(ctx, c)
	}
	if strings.HasPrefix(s.op, "es_") {
		return d.eventStore(ctx, s)
	}
	return nil, fail("unknown op %s", s.op)
}

func min64(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func topicPartition(s *step) (cursus.TopicPartition, error) {
	topic, err := s.arg("topic")
	if err != nil {
		return cursus.TopicPartition{}, err
	}
	partition, err := s.unsigned("partition", 32)
	if err != nil {
		return cursus.TopicPartition{}, err
	}
	return cursus.TopicPartition{Topic: topic, Partition: uint32(partition)}, nil
}

func (d *driver) offsets(ctx context.Context, s *step) (cursus.PartitionOffsets, error) {
	tp, err := topicPartition(s)
	if err != nil {
		return cursus.PartitionOffsets{}, err
	}
	a, err := d.admin(ctx, s)
	if err != nil {
		return cursus.PartitionOffsets{}, err
	}
	all, err := a.ListOffsets(ctx, tp.Topic, int64(tp.Partition))
	if err != nil {
		return cursus.PartitionOffsets{}, err
	}
	for _, o := range all {
		if o.Partition == tp.Partition {
			return o, nil
		}
	}
	return cursus.PartitionOffsets{}, fail("list_offsets: no partition %d in the reply", tp.Partition)
}

func (d *driver) produce(ctx context.Context, s *step) (result, error) {
	p, err := lookup(d.producers, s, "producer", "producer")
	if err != nil {
		return nil, err
	}
	topic, err := s.arg("topic")
	if err != nil {
		return nil, err
	}
	value, err := s.bytes("value")
	if err != nil {
		return nil, err
	}
	if value == nil {
		fill, err := s.bytes("value_fill")
		if err != nil {
			return nil, err
		}
		if len(fill) != 1 {
			return nil, fail("produce: needs value or value_fill (one byte) and value_len")
		}
		n, err := s.unsigned("value_len", 32)
		if err != nil {
			return nil, err
		}
		value = []byte(strings.Repeat(string(fill), int(n)))
	}
	key, err := s.bytes("key") // nil: no key; empty: an empty key
	if err != nil {
		return nil, err
	}
	partition := cursus.AnyPartition
	if _, ok := s.args["partition"]; ok {
		n, err := s.num("partition")
		if err != nil {
			return nil, err
		}
		partition = int32(n)
	}
	r := cursus.Record{Topic: topic, Partition: partition, Key: key, Value: value}
	if _, ok := s.args["timestamp"]; ok {
		ms, err := s.num("timestamp")
		if err != nil {
			return nil, err
		}
		r.Timestamp = time.UnixMilli(ms)
	}
	metadata, err := s.bytes("metadata")
	if err != nil {
		return nil, err
	}
	r.Metadata = string(metadata)
	if traceparent, ok := s.args["traceparent"]; ok {
		r.TraceContext = &cursus.TraceContext{Traceparent: traceparent, Tracestate: s.args["tracestate"]}
	}
	md, err := p.Send(ctx, r)
	if err != nil {
		return nil, err
	}
	out := result{"partition": md.Partition, "offset": md.Offset, "timestamp": md.Timestamp.UnixMilli()}
	if md.Offset < 0 {
		out["offset"] = nil
	}
	return out, nil
}

func (d *driver) produceMany(ctx context.Context, s *step) (result, error) {
	p, err := lookup(d.producers, s, "producer", "producer")
	if err != nil {
		return nil, err
	}
	topic, err := s.arg("topic")
	if err != nil {
		return nil, err
	}
	count, err := s.unsigned("count", 32)
	if err != nil {
		return nil, err
	}
	valuePrefix, err := s.bytes("value_prefix")
	if err != nil {
		return nil, err
	}
	keyPrefix, err := s.bytes("key_prefix")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	partitions := make([]int32, count)
	failures := make([]error, count)
	var queueErr error
	for i := 0; i < int(count) && queueErr == nil; i++ {
		suffix := strconv.Itoa(i)
		r := cursus.Record{Topic: topic, Partition: cursus.AnyPartition,
			Value: append(append([]byte{}, valuePrefix...), suffix...)}
		if keyPrefix != nil {
			r.Key = append(append([]byte{}, keyPrefix...), suffix...)
		}
		queueErr = p.SendAsync(ctx, r, func(m cursus.RecordMetadata, err error) {
			mu.Lock()
			defer mu.Unlock()
			partitions[i], failures[i] = m.Partition, err
		})
	}
	// Flush returns once every callback of the records sent before it ran.
	flushErr := p.Flush(ctx)
	if queueErr != nil {
		return nil, queueErr
	}
	if flushErr != nil {
		return nil, flushErr
	}
	mu.Lock()
	defer mu.Unlock()
	for _, err := range failures {
		if err != nil {
			return nil, err
		}
	}
	return result{"count": count, "partitions": partitions}, nil
}

// poll runs the poll and take ops: polls until count records arrived
// (count=0 behaves like 1) or timeout_ms passed. poll takes one message per
// Poll; take asks each PollBatch for at most the records still wanted, so
// it receives exactly count (only those count as delivered).
func (d *driver) poll(s *step, exact bool) (result, error) {
	c, err := lookup(d.consumers, s, "consumer", "consumer")
	if err != nil {
		return nil, err
	}
	want, err := s.unsigned("count", 32)
	if err != nil {
		return nil, err
	}
	want = max(want, 1)
	timeout, err := s.num("timeout_ms")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout)*time.Millisecond)
	defer cancel()
	records := []record{}
	for uint64(len(records)) < want {
		var got []cursus.Message
		if exact {
			got, err = c.PollBatch(ctx, int(want)-len(records))
		} else {
			var m *cursus.Message
			if m, err = c.Poll(ctx); m != nil {
				got = []cursus.Message{*m}
			}
		}
		var ce *cursus.Error
		if errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ce) {
			break // ctx ran out of time: not an error
		}
		if err != nil {
			return nil, err // records received before a failed poll are dropped
		}
		for _, m := range got {
			records = append(records, toRecord(m))
		}
	}
	return result{"records": records}, nil
}

// pollOnce makes one call of Poll: empty before its deadline only when woken.
func (d *driver) pollOnce(s *step) (result, error) {
	c, err := lookup(d.consumers, s, "consumer", "consumer")
	if err != nil {
		return nil, err
	}
	ms, err := s.num("timeout_ms")
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(ms) * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	m, err := c.Poll(ctx)
	var ce *cursus.Error
	if err != nil && (!errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ce)) {
		return nil, err // running out of time is not an error
	}
	records := []record{}
	if m != nil {
		records = append(records, toRecord(*m))
	}
	return result{"records": records, "early_empty": m == nil && time.Since(start) < timeout}, nil
}

// toRecord is a polled message as the protocol's record object.
func toRecord(m cursus.Message) record {
	r := record{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Value: hex.EncodeToString(m.Value),
		Timestamp: m.Timestamp.UnixMilli()}
	if m.Key != nil { // nil: the record has no key
		k := hex.EncodeToString(m.Key)
		r.Key = &k
	}
	if m.Metadata != nil {
		md := hex.EncodeToString([]byte(*m.Metadata))
		r.Metadata = &md
	}
	// The context as the binding reads it, never parsed here.
	if tc := m.TraceContext(); tc != nil {
		tp := tc.Traceparent
		r.Traceparent = &tp
		if tc.Tracestate != "" {
			ts := tc.Tracestate
			r.Tracestate = &ts
		}
	}
	if m.Event != nil {
		et, av := m.Event.Type, m.Event.AggregateVersion
		r.EventType, r.AggregateVersion = &et, &av
	}
	return r
}

// errorJSON is the protocol's error object.
type errorJSON struct {
	Code      string            `json:"code"`
	Class     string            `json:"class"`
	Retryable bool              `json:"retryable"`
	Fields    map[string]string `json:"fields"`
}

func toErrorJSON(err error) errorJSON {
	var ce *cursus.Error
	if errors.As(err, &ce) {
		fields := ce.Fields
		if fields == nil {
			fields = map[string]string{}
		}
		fmt.Fprintf(os.Stderr, "binding error: %v\n", err)
		return errorJSON{Code: ce.Code, Class: ce.Class, Retryable: ce.Retryable, Fields: fields}
	}
	fmt.Fprintf(os.Stderr, "driver error: %v\n", err)
	return errorJSON{Code: "driver_error", Class: "internal", Fields: map[string]string{}}
}

type okLine struct {
	Step   int    `json:"step"`
	OK     bool   `json:"ok"`
	Result result `json:"result"`
}

type errLine struct {
	Step  int       `json:"step"`
	OK    bool      `json:"ok"`
	Error errorJSON `json:"error"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: %s <bootstrap host:port> <plan file>\n", os.Args[0])
		os.Exit(2)
	}
	plan, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot read plan: %v\n", err)
		os.Exit(2)
	}
	d := &driver{
		bootstrap: os.Args[1],
		admins:    map[string]*cursus.Admin{},
		producers: map[string]*cursus.Producer{},
		consumers: map[string]*cursus.Consumer{},
		rebalance: map[string]*eventLog{},
		stores:    map[string]*cursus.EventStore{},
	}
	out := bufio.NewWriter(os.Stdout)
	n := 0
	for _, line := range strings.Split(string(plan), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var res result
		s, err := parseStep(line)
		if err == nil {
			res, err = d.run(s)
		}
		var encoded []byte
		if err != nil {
			encoded, _ = json.Marshal(errLine{Step: n, OK: false, Error: toErrorJSON(err)})
		} else {
			encoded, _ = json.Marshal(okLine{Step: n, OK: true, Result: res})
		}
		out.Write(append(encoded, '\n'))
		out.Flush()
		n++
	}
	// Handles are left as they are: closing them could leave a group or
	// commit, which the plan did not ask for. The process ends here.
}

// partitionList reads a comma-separated "topic:p" list.
func partitionList(s *step) ([]cursus.TopicPartition, error) {
	text, err := s.arg("partitions")
	if err != nil {
		return nil, err
	}
	out := []cursus.TopicPartition{}
	for _, item := range strings.Split(text, ",") {
		i := strings.LastIndex(item, ":")
		if i < 0 {
			return nil, fail("partitions: %q is not topic:p", item)
		}
		p, err := strconv.ParseUint(item[i+1:], 10, 32)
		if err != nil {
			return nil, fail("partitions: %q is not topic:p", item)
		}
		out = append(out, cursus.TopicPartition{Topic: item[:i], Partition: uint32(p)})
	}
	return out, nil
}

// tpNames is partitions as sorted "topic:p" strings.
func tpNames(partitions []cursus.TopicPartition) []string {
	out := []string{}
	for _, tp := range partitions {
		out = append(out, fmt.Sprintf("%s:%d", tp.Topic, tp.Partition))
	}
	sort.Strings(out)
	return out
}

// control runs the consumer control ops (seek ... rebalance_events).
func (d *driver) control(ctx context.Context, s *step) (result, error) {
	if s.op == "rebalance_events" {
		name, err := s.arg("consumer")
		if err != nil {
			return nil, err
		}
		log, ok := d.rebalance[name]
		if !ok {
			return nil, fail("no rebalance listener of consumer %q", name)
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		events := append([]map[string]any{}, log.events...)
		return result{"events": events}, nil
	}
	c, err := lookup(d.consumers, s, "consumer", "consumer")
	if err != nil {
		return nil, err
	}
	switch s.op {
	case "seek":
		tp, err := topicPartition(s)
		if err != nil {
			return nil, err
		}
		offset, err := s.num("offset")
		if err != nil {
			return nil, err
		}
		return result{}, c.Seek(ctx, tp, offset)
	case "position":
		tp, err := topicPartition(s)
		if err != nil {
			return nil, err
		}
		offset, err := c.Position(ctx, tp)
		if err != nil {
			return nil, err
		}
		return result{"offset": offset}, nil
	case "pause", "resume":
		partitions, err := partitionList(s)
		if err != nil {
			return nil, err
		}
		if s.op == "pause" {
			return result{}, c.Pause(ctx, partitions...)
		}
		return result{}, c.Resume(ctx, partitions...)
	case "paused":
		partitions, err := c.Paused(ctx)
		if err != nil {
			return nil, err
		}
		return result{"partitions": tpNames(partitions)}, nil
	case "committed_list":
		partitions, err := partitionList(s)
		if err != nil {
			return nil, err
		}
		committed, err := c.CommittedOffsets(ctx, partitions)
		if err != nil {
			return nil, err
		}
		out := []any{}
		for _, tp := range partitions {
			if off, ok := committed[tp]; ok {
				out = append(out, off)
			} else {
				out = append(out, nil)
			}
		}
		return result{"committed": out}, nil
	case "rebalance_listen":
		name, _ := s.arg("consumer")
		var seekTo *int64
		if _, ok := s.args["seek_to"]; ok {
			n, err := s.num("seek_to")
			if err != nil {
				return nil, err
			}
			seekTo = &n
		}
		commit := s.args["commit_on_revoke"] == "true"
		log := d.rebalance[name]
		if log == nil {
			log = &eventLog{}
			d.rebalance[name] = log
		}
		record := func(kind string, partitions []cursus.TopicPartition, extra func(map[string]any)) {
			entry := map[string]any{"kind": kind, "partitions": tpNames(partitions)}
			extra(entry)
			log.mu.Lock()
			log.events = append(log.events, entry)
			log.mu.Unlock()
		}
		return result{}, c.SetRebalanceListener(&cursus.RebalanceListener{
			OnAssigned: func(partitions []cursus.TopicPartition) {
				if seekTo != nil {
					for _, tp := range partitions {
						_ = c.Seek(context.Background(), tp, *seekTo)
					}
				}
				record("assigned", partitions, func(map[string]any) {})
			},
			OnRevoked: func(partitions []cursus.TopicPartition) {
				var commitErr error
				if commit {
					commitErr = c.Commit(context.Background())
				}
				record("revoked", partitions, func(e map[string]any) {
					var ce *cursus.Error
					if errors.As(commitErr, &ce) {
						e["commit_error"] = ce.Code
					} else if commitErr != nil {
						e["commit_error"] = commitErr.Error()
					}
				})
			},
			OnLost: func(partitions []cursus.TopicPartition) {
				record("lost", partitions, func(map[string]any) {})
			},
		})
	}
	return nil, fail("unknown op %q", s.op)
}
