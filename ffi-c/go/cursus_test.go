package cursus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// broker is the address of the broker started by TestMain.
var broker string

// TestMain starts a real cursus-broker ($CURSUS_BROKER_BIN, or uses an
// already running one at $CURSUS_TEST_BROKER) with a temporary data
// directory on a free loopback port.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if addr := os.Getenv("CURSUS_TEST_BROKER"); addr != "" {
		broker = addr
		return m.Run()
	}
	bin := os.Getenv("CURSUS_BROKER_BIN")
	if bin == "" {
		fmt.Fprintln(os.Stderr, "set CURSUS_BROKER_BIN (path of cursus-broker) or CURSUS_TEST_BROKER")
		return 2
	}
	dir, err := os.MkdirTemp("", "cursus-go-test")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0", "--data-dir", dir+"/data")
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	cmd.Stderr = nil // the broker's log is not part of the test output
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		fmt.Fprintln(os.Stderr, "broker did not start")
		return 1
	}
	for _, f := range strings.Fields(sc.Text()) {
		if a, ok := strings.CutPrefix(f, "addr="); ok {
			broker = a
		}
	}
	go func() { // keeps the broker's stdout drained
		for sc.Scan() {
		}
	}()
	if broker == "" {
		fmt.Fprintln(os.Stderr, "unexpected broker line:", sc.Text())
		return 1
	}
	return m.Run()
}

var seq atomic.Int64

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
}

// hangGuard bounds waits that must end; it is never a timing assertion.
const hangGuard = 30 * time.Second

// ctxT is a test's context, with a deadline as a hang guard.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newAdmin(t testing.TB) *Admin {
	t.Helper()
	a, err := NewAdmin(ctxT(t), WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func createTopic(t testing.TB, topic string, partitions int) {
	t.Helper()
	if _, err := newAdmin(t).CreateTopic(ctxT(t), topic, partitions); err != nil {
		t.Fatal(err)
	}
}

func newProducer(t testing.TB, opts ...Option) *Producer {
	t.Helper()
	p, err := NewProducer(ctxT(t), append([]Option{WithBootstrap(broker)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// produceValues sends v0..v<n-1> to partition 0 of topic.
func produceValues(t testing.TB, topic string, n int) {
	t.Helper()
	ctx := ctxT(t)
	p := newProducer(t)
	for i := 0; i < n; i++ {
		if err := p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func newConsumer(t testing.TB, group string, opts ...Option) *Consumer {
	t.Helper()
	opts = append([]Option{WithBootstrap(broker), WithGroup(group), WithOption("fetch_max_wait_ms", "50")}, opts...)
	c, err := NewConsumer(ctxT(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// take polls one message at a time until n arrived; returns their offsets.
func take(t testing.TB, c *Consumer, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var offsets []int64
	for len(offsets) < n {
		m, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(offsets), n, err)
		}
		offsets = append(offsets, m.Offset)
	}
	return offsets
}

// takeBatches polls batches of at most the messages still wanted until n
// arrived; returns their offsets.
func takeBatches(t testing.TB, c *Consumer, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var offsets []int64
	for len(offsets) < n {
		batch, err := c.PollBatch(ctx, n-len(offsets))
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(offsets), n, err)
		}
		if len(batch) == 0 || len(batch) > n-len(offsets) {
			t.Fatalf("a batch of %d messages, %d wanted", len(batch), n-len(offsets))
		}
		for _, m := range batch {
			offsets = append(offsets, m.Offset)
		}
	}
	return offsets
}

// assertNothingMore checks that no further message arrives within a short
// while (an absence can only be checked over some time).
func assertNothingMore(t testing.TB, c *Consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if m, err := c.Poll(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want nothing more, got %+v, %v", m, err)
	}
}

// awaitMember waits until group has a member. A consumer joins its group in
// its first Poll, so once the group shows it, that Poll is in the library.
func awaitMember(t testing.TB, group string) {
	t.Helper()
	a := newAdmin(t)
	until := time.Now().Add(hangGuard)
	for {
		status, err := a.GroupStatus(ctxT(t), group)
		if err == nil && len(status.Members) > 0 {
			return
		}
		if time.Now().After(until) {
			t.Fatalf("group %s never got a member (last: %+v, %v)", group, status, err)
		}
		time.Sleep(10 * time.Millisecond) // the broker's view can only be polled
	}
}

// within returns what ch delivers, failing the test after hangGuard.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("%s: still waiting after %v", what, hangGuard)
		panic("unreachable")
	}
}

func TestVersionCheckPasses(t *testing.T) {
	if Version == "" || LibraryVersion() != Version {
		t.Fatalf("package %q, library %q", Version, LibraryVersion())
	}
	if err := versionChecked(); err != nil {
		t.Fatal(err)
	}
	// The error New* would return for another library version.
	err := checkVersion("0.0.0-other")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "version_mismatch" || !errors.Is(err, ErrInternal) {
		t.Fatalf("mismatch error %#v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "0.0.0-other") || !strings.Contains(msg, Version) {
		t.Fatalf("the message does not name both versions: %q", msg)
	}
}

func TestTimeoutContract(t *testing.T) {
	if got := timeoutMillis(context.Background()); got != DefaultTimeout.Milliseconds() || got != 30000 {
		t.Fatalf("no deadline: %d ms", got)
	}
	if got := timeoutMillis(NoTimeout(context.Background())); got != -1 {
		t.Fatalf("NoTimeout: %d ms", got)
	}
	ctx, cancel := context.WithTimeout(NoTimeout(context.Background()), time.Hour)
	defer cancel()
	if got := timeoutMillis(ctx); got <= 0 || got > time.Hour.Milliseconds() {
		t.Fatalf("a deadline bounds even NoTimeout: %d ms", got)
	}
	p := newProducer(t)
	if err := p.Flush(NoTimeout(ctxT(t))); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(NoTimeout(context.Background())); err != nil {
		t.Fatal(err)
	}
}

func TestOptionErrorsNameTheKindAndItsOptions(t *testing.T) {
	_, err := NewProducer(ctxT(t), WithBootstrap(broker), WithOption("group_id", "g"))
	var ce *Error
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrValidation) || errors.Is(err, ErrRouting) {
		t.Fatalf("wrong classification: %v", err)
	}
	want := `invalid_argument (validation): unknown producer option "group_id"; known options: acks, `
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "linger_ms") || strings.Contains(msg, "group_id,") {
		t.Fatalf("message %q", msg)
	}
	if ce.Retryable || ce.Kind != "invalid_argument" || ce.Status != StatusInvalidArgument {
		t.Fatalf("unexpected error: %#v", ce)
	}
	if _, err := NewProducer(ctxT(t), WithBootstrap(broker), WithOption("linger_ms", "soon")); !errors.Is(err, ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "linger_ms") {
		t.Fatalf("bad value: %v", err)
	}
	if _, err := NewConsumer(ctxT(t), WithBootstrap(broker)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("consumer without group: %v", err)
	}
}

func TestAdminTypedResultsAndErrors(t *testing.T) {
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	topic := unique("go-admin")
	_, err = a.DescribeTopic(ctx, topic)
	var ce *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ce) || ce.Fields["topic"] != topic || ce.Code != "topic_not_found" {
		t.Fatalf("want not_found, got %v", err)
	}
	if want := "topic_not_found (not_found): topic=" + topic; err.Error() != want {
		t.Fatalf("error text %q, want %q", err.Error(), want)
	}
	if _, err := a.DeleteTopic(ctx, topic, false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete missing: %v", err)
	}
	if r, err := a.DeleteTopic(ctx, topic, true); err != nil || r.Deleted {
		t.Fatalf("delete missing if_exists: %+v %v", r, err)
	}
	if _, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"no_such_field": "1"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad option: %v", err)
	}
	info, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"partitions": "3", "retention_hours": "24", "read_acl": "alice,bob"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != topic || info.Partitions != 3 || info.Revision != 1 || info.RetentionHours != 24 ||
		!slices.Equal(info.ReadACL, []string{"alice", "bob"}) || len(info.WriteACL) != 0 ||
		info.MinInSyncReplicas != DefaultMinInSyncReplicas || info.CleanupPolicy == "" || info.Partitioner == "" {
		t.Fatalf("created %+v", info)
	}
	if altered, err := a.AlterTopicConfig(ctx, topic, 1); err != nil || altered.MinInSyncReplicas != 1 {
		t.Fatalf("altered %+v %v", altered, err)
	}
	if altered, err := a.AlterTopicConfig(ctx, topic, DefaultMinInSyncReplicas); err != nil || altered.MinInSyncReplicas != -1 {
		t.Fatalf("altered to the default %+v %v", altered, err)
	}
	desc, err := a.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Topic != topic || desc.Definition.Name != topic || desc.Definition.Partitions != 3 || len(desc.Partitions) != 3 {
		t.Fatalf("described %+v", desc)
	}
	for i, p := range desc.Partitions {
		if p.ID != uint32(i) || p.Leader != broker || len(p.Replicas) != 1 || !slices.Equal(p.ISR, p.Replicas) ||
			p.Earliest != 0 || p.LEO != 0 || p.HWM != 0 {
			t.Fatalf("partition %d described as %+v", i, p)
		}
	}
	md, err := a.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if md.Topic.Name != topic || md.Topic.Partitions != 3 || len(md.Leaders) != 3 || md.Leaders[2] != broker || len(md.Epochs) != 3 {
		t.Fatalf("metadata %+v", md)
	}
	offsets, err := a.ListOffsets(ctx, topic, AllPartitions)
	if err != nil || len(offsets) != 3 {
		t.Fatalf("offsets %+v %v", offsets, err)
	}
	one, err := a.ListOffsets(ctx, topic, 2)
	if err != nil || len(one) != 1 || one[0].Partition != 2 || one[0].Latest != 0 {
		t.Fatalf("offsets of partition 2: %+v %v", one, err)
	}
	if _, err := a.TruncateTopic(ctx, topic, md.Topic.Revision+100); !errors.Is(err, ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	tr, err := a.TruncateTopic(ctx, topic, md.Topic.Revision)
	if err != nil || tr.Revision != md.Topic.Revision+1 || tr.LifecycleEpoch <= md.Topic.LifecycleEpoch {
		t.Fatalf("truncated %+v %v (before: %+v)", tr, err, md.Topic)
	}
	names, err := a.ListTopics(ctx)
	if err != nil || !slices.Contains(names, topic) {
		t.Fatalf("%s not in %v (%v)", topic, names, err)
	}
	if help, err := a.Help(ctx); err != nil || !slices.Contains(help, "PUBLISH") {
		t.Fatalf("help %v %v", help, err)
	}
	if _, err := a.ListGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := a.DeleteTopic(ctx, topic, false); err != nil || !r.Deleted {
		t.Fatalf("delete %+v %v", r, err)
	}
	if r, err := a.DeleteTopic(ctx, topic, true); err != nil || r.Deleted {
		t.Fatalf("delete again %+v %v", r, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal("second close:", err)
	}
	if _, err := a.ListTopics(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("want ErrClosed, got %v", err)
	}
}

func TestProduceAndConsumeThroughGroup(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-roundtrip"), unique("go-group")
	createTopic(t, topic, 1)
	p, err := NewProducer(ctx, WithBootstrap(broker), WithOption("linger_ms", "1"))
	if err != nil {
		t.Fatal(err)
	}
	binary := []byte{'a', 0, 'b', 0, 0xff}
	stamp := time.UnixMilli(1700000000000)
	m, err := p.Send(ctx, Record{Topic: topic, Partition: AnyPartition, Key: []byte("k"), Value: binary, Timestamp: stamp})
	if err != nil {
		t.Fatal(err)
	}
	if m.Partition != 0 || m.Offset != 0 || m.Topic != topic || !m.Timestamp.Equal(stamp) {
		t.Fatalf("metadata %+v", m)
	}
	// Concurrent async sends from several goroutines, with keys.
	var wg sync.WaitGroup
	var delivered atomic.Int32
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				r := Record{Topic: topic, Partition: AnyPartition, Key: []byte(fmt.Sprintf("key-%d-%d", g, i)),
					Value: []byte(fmt.Sprintf("g%d-%d", g, i))}
				err := p.SendAsync(ctx, r, func(_ RecordMetadata, err error) {
					if err == nil {
						delivered.Add(1)
					}
				})
				if err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	// When Flush returns, every callback of the records before it has run.
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if delivered.Load() != 20 {
		t.Fatalf("delivered %d of 20", delivered.Load())
	}

	c := newConsumer(t, group)
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	first, err := c.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The stored timestamp is the broker's (append time), not the record's.
	if !bytes.Equal(first.Value, binary) || string(first.Key) != "k" || first.Topic != topic || first.Offset != 0 ||
		first.Timestamp.UnixMilli() <= 0 {
		t.Fatalf("first message %+v", first)
	}
	// The rest through the packed record view, in batches of at most 7.
	var got []Message
	for len(got) < 20 {
		batch, err := c.PollBatch(ctx, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) == 0 || len(batch) > 7 {
			t.Fatalf("batch of %d, max 7", len(batch))
		}
		got = append(got, batch...)
	}
	for i, msg := range got {
		var g, n int
		if _, err := fmt.Sscanf(string(msg.Value), "g%d-%d", &g, &n); err != nil || msg.Offset != int64(i+1) || msg.Topic != topic ||
			msg.Partition != 0 || string(msg.Key) != fmt.Sprintf("key-%d-%d", g, n) || msg.Timestamp.Before(first.Timestamp) {
			t.Fatalf("message %d: %+v", i, msg)
		}
	}
	if _, err := c.PollBatch(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a batch of 0: %v", err)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if off, ok, err := c.Committed(ctx, topic, 0); err != nil || !ok || off != 21 {
		t.Fatalf("committed %d %v %v", off, ok, err)
	}
	// Poll with a short deadline: nothing more, so the context ends it.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := c.Poll(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Poll(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("poll after close: %v", err)
	}

	// The group resumes after the commit.
	if _, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	c2 := newConsumer(t, group)
	if err := c2.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	if msg, err := c2.Poll(ctx); err != nil || msg.Offset != 21 || string(msg.Value) != "after" {
		t.Fatalf("resumed at %+v (%v)", msg, err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal("second close:", err)
	}
	if _, err := p.Send(ctx, Record{Topic: topic, Value: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
	if err := p.SendAsync(ctx, Record{Topic: topic, Value: []byte("x")}, func(RecordMetadata, error) {
		t.Error("a callback for a record that was never queued")
	}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send async after close: %v", err)
	}
}

func TestConsumerPatternCommitAsyncAndGroupStatus(t *testing.T) {
	ctx := ctxT(t)
	prefix, group := unique("go-pat"), unique("go-pat-group")
	topic := prefix + "-orders"
	createTopic(t, topic, 2)
	produceValues(t, topic, 3)
	c := newConsumer(t, group)
	if err := c.SubscribePattern(ctx, prefix+"-*"); err != nil {
		t.Fatal(err)
	}
	if id, err := c.MemberID(ctx); err != nil || id != "" {
		t.Fatalf("member id before joining: %q %v", id, err)
	}
	if off, found, err := c.Committed(ctx, topic, 0); err != nil || found || off != -1 {
		t.Fatalf("committed before commit: %d %v %v", off, found, err)
	}
	for seen := 0; seen < 3; seen++ {
		m, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Topic != topic {
			t.Fatalf("topic %q", m.Topic)
		}
	}
	assigned, err := c.Assignment(ctx)
	if err != nil || len(assigned) != 2 || assigned[0].Topic != topic || assigned[0].Partition == assigned[1].Partition {
		t.Fatalf("assignment: %+v %v", assigned, err)
	}
	done := make(chan error, 1)
	if err := c.CommitAsync(ctx, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	if err := within(t, done, "the commit callback"); err != nil {
		t.Fatal(err)
	}
	if off, found, err := c.Committed(ctx, topic, 0); err != nil || !found || off != 3 {
		t.Fatalf("committed: %d %v %v", off, found, err)
	}
	if err := c.CommitAsync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	a := newAdmin(t)
	groups, err := a.ListGroups(ctx)
	if err != nil || !slices.Contains(groups, group) {
		t.Fatalf("groups: %v %v", groups, err)
	}
	status, err := a.GroupStatus(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if status.Group != group || status.State == "" || status.Generation == 0 || len(status.Members) != 1 ||
		status.Members[0].MemberID == "" || len(status.Members[0].Assignments) != 2 {
		t.Fatalf("group status %+v", status)
	}
	if id, err := c.MemberID(ctx); err != nil || id != status.Members[0].MemberID {
		t.Fatalf("member id %q (%v), the group lists %q", id, err, status.Members[0].MemberID)
	}
	if _, err := a.GroupStatus(ctx, unique("go-no-group")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("status of a missing group: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitAsync(ctx, func(error) { t.Error("callback after a failed start") }); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}
	if _, err := c.MemberID(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("member id after close: %v", err)
	}
}

func TestCommitOffsetsExplicit(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-commit-offsets"), unique("go-commit-offsets-group")
	createTopic(t, topic, 2)
	produceValues(t, topic, 4)
	opts := []Option{WithOption("auto_offset_reset", "earliest")}
	c := newConsumer(t, group, opts...)
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	// Not joined yet (no poll): nothing to commit against.
	err := c.CommitOffsets(ctx, map[TopicPartition]int64{{topic, 0}: 1})
	var ce *Error
	if !errors.As(err, &ce) || ce.Status != StatusInvalidArgument || ce.Class != "validation" {
		t.Fatalf("commit before join: %v", err)
	}
	if _, err := c.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, map[TopicPartition]int64{{topic, 0}: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative offset: %v", err)
	}
	if err := c.CommitOffsets(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, map[TopicPartition]int64{{topic, 0}: 2, {topic, 1}: 0}); err != nil {
		t.Fatal(err)
	}
	if off, found, err := c.Committed(ctx, topic, 0); err != nil || !found || off != 2 {
		t.Fatalf("committed 0: %d %v %v", off, found, err)
	}
	if off, found, err := c.Committed(ctx, topic, 1); err != nil || !found || off != 0 {
		t.Fatalf("committed 1: %d %v %v", off, found, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitOffsets(ctx, map[TopicPartition]int64{{topic, 0}: 3}); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}
	// The group resumes from the explicitly committed offset.
	second := newConsumer(t, group, opts...)
	if err := second.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	m, err := second.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Partition != 0 || m.Offset != 2 || string(m.Value) != "v2" {
		t.Fatalf("resumed at %d/%d %q", m.Partition, m.Offset, m.Value)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewProducer(ctx, WithBootstrap(broker)); !errors.Is(err, context.Canceled) {
		t.Fatalf("want Canceled, got %v", err)
	}
	p := newProducer(t)
	if _, err := p.Send(ctx, Record{Topic: "x", Value: []byte("x")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("send: want Canceled, got %v", err)
	}
	if err := p.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("flush: want Canceled, got %v", err)
	}
	if _, err := newAdmin(t).ListTopics(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("admin: want Canceled, got %v", err)
	}
}

func TestCancellingEndsABlockedPoll(t *testing.T) {
	topic, group := unique("go-cancel-poll"), unique("go-cancel-poll-group")
	createTopic(t, topic, 1)
	c := newConsumer(t, group)
	if err := c.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	polled := make(chan error, 1)
	go func() {
		_, err := c.Poll(ctx)
		polled <- err
	}()
	awaitMember(t, group)
	cancel()
	if err := within(t, polled, "the cancelled poll"); !errors.Is(err, context.Canceled) {
		t.Fatalf("want Canceled, got %v", err)
	}
	// The consumer is still usable: a message sent now is received.
	produceValues(t, topic, 1)
	if got := take(t, c, 1); !slices.Equal(got, []int64{0}) {
		t.Fatalf("took %v", got)
	}
}

func TestContextDeadlineBoundsConnecting(t *testing.T) {
	// A server that accepts connections and never answers the handshake.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn) // kept open, never answered
			mu.Unlock()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = NewProducer(ctx, WithBootstrap(l.Addr().String()))
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	// Well before the 5 s connect timeout (a generous bound, not a measurement).
	if elapsed > 4*time.Second {
		t.Fatalf("returned after %v", elapsed)
	}
}

func TestSendToMissingTopicIsNotFound(t *testing.T) {
	ctx := ctxT(t)
	p := newProducer(t, WithOption("retries", "0"))
	topic := unique("go-missing")
	_, err := p.Send(ctx, Record{Topic: topic, Partition: AnyPartition, Value: []byte("x")})
	var ce *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ce) || ce.Code != "topic_not_found" || ce.Fields["topic"] != topic {
		t.Fatalf("want topic_not_found, got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "topic_not_found (not_found): ") || !strings.Contains(err.Error(), "topic="+topic) {
		t.Fatalf("error text %q", err.Error())
	}
}

func TestCallbackMaySendAndFlushItsProducer(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-reentry")
	createTopic(t, topic, 1)
	p := newProducer(t)
	type outcome struct {
		offset      int64
		send, flush error
	}
	done := make(chan outcome, 1)
	err := p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: []byte("outer")}, func(_ RecordMetadata, err error) {
		if err != nil {
			done <- outcome{send: err}
			return
		}
		m, sendErr := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte("inner")})
		done <- outcome{offset: m.Offset, send: sendErr, flush: p.Flush(ctx)}
	})
	if err != nil {
		t.Fatal(err)
	}
	if o := within(t, done, "the callback"); o.send != nil || o.flush != nil || o.offset != 1 {
		t.Fatalf("inside the callback: %+v", o)
	}
}

func TestCallbackMayCloseItsProducer(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-close-in-cb")
	createTopic(t, topic, 1)
	p := newProducer(t)
	closed := make(chan error, 1)
	// ctx can be cancelled, so Close waits in slices: still on the callback
	// thread, where the library waits for acknowledgements only.
	if err := p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: []byte("v")}, func(_ RecordMetadata, err error) {
		if err != nil {
			closed <- err
			return
		}
		closed <- p.Close(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	if err := within(t, closed, "Close inside the callback"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, Record{Topic: topic, Value: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
}

func TestBlockedCallbackDoesNotStallAnotherProducer(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-slow-cb")
	createTopic(t, topic, 1)
	slow, fast := newProducer(t), newProducer(t)
	entered, otherRan, slowDone := make(chan struct{}), make(chan struct{}), make(chan bool, 1)
	if err := slow.SendAsync(ctx, Record{Topic: topic, Value: []byte("a")}, func(RecordMetadata, error) {
		close(entered)
		// Blocks until the other producer's callback ran (hang guard only).
		select {
		case <-otherRan:
			slowDone <- true
		case <-time.After(hangGuard):
			slowDone <- false
		}
	}); err != nil {
		t.Fatal(err)
	}
	within(t, entered, "the first callback")
	if err := fast.SendAsync(ctx, Record{Topic: topic, Value: []byte("b")}, func(RecordMetadata, error) { close(otherRan) }); err != nil {
		t.Fatal(err)
	}
	if !within(t, slowDone, "the blocked callback") {
		t.Fatal("a blocked callback held up another producer's callbacks")
	}
}

func TestCloseAndWakeupInterruptABlockedPoll(t *testing.T) {
	topic := unique("go-idle")
	createTopic(t, topic, 1)
	type result struct {
		m   *Message
		err error
	}
	blockedPoll := func(c *Consumer, group string) <-chan result {
		polled := make(chan result, 1)
		go func() {
			m, err := c.Poll(context.Background())
			polled <- result{m, err}
		}()
		awaitMember(t, group) // the poll joined: it is in the library
		return polled
	}

	group := unique("go-idle-group")
	c := newConsumer(t, group)
	if err := c.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	polled := blockedPoll(c, group)
	if err := c.Wakeup(); err != nil {
		t.Fatal(err)
	}
	if r := within(t, polled, "the poll after Wakeup"); r.m != nil || r.err != nil {
		t.Fatalf("after Wakeup: %+v", r)
	}
	// A Wakeup with no poll running makes the next poll return at once.
	if err := c.Wakeup(); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Poll(context.Background()); m != nil || err != nil {
		t.Fatalf("the poll after an earlier Wakeup: %+v %v", m, err)
	}

	group = unique("go-idle-group")
	c = newConsumer(t, group)
	if err := c.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	polled = blockedPoll(c, group)
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	if err := within(t, closed, "Close during a blocked poll"); err != nil {
		t.Fatal(err)
	}
	if r := within(t, polled, "the poll interrupted by Close"); r.m != nil || !errors.Is(r.err, ErrClosed) {
		t.Fatalf("the blocked poll returned %+v", r)
	}
}

func TestCloseCommitsOnlyTheMessagesTaken(t *testing.T) {
	for _, how := range []struct {
		name string
		take func(testing.TB, *Consumer, int) []int64
	}{{"Poll", take}, {"PollBatch", takeBatches}} {
		t.Run(how.name, func(t *testing.T) {
			topic, group := unique("go-taken"), unique("go-taken-group")
			createTopic(t, topic, 1)
			produceValues(t, topic, 10)
			opts := []Option{WithOption("enable_auto_commit", "true"), WithOption("max_poll_records", "10")}
			first := newConsumer(t, group, opts...)
			if err := first.Subscribe(ctxT(t), topic); err != nil {
				t.Fatal(err)
			}
			// The engine fetches up to 10; only the 3 taken count.
			if got := how.take(t, first, 3); !slices.Equal(got, []int64{0, 1, 2}) {
				t.Fatalf("took %v", got)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			second := newConsumer(t, group, opts...)
			if err := second.Subscribe(ctxT(t), topic); err != nil {
				t.Fatal(err)
			}
			if got := how.take(t, second, 7); !slices.Equal(got, []int64{3, 4, 5, 6, 7, 8, 9}) {
				t.Fatalf("the new member got %v", got)
			}
			assertNothingMore(t, second)
		})
	}
}

// BenchmarkSend measures one blocking Send through cgo (acks=1, no linger).
func BenchmarkSend(b *testing.B) {
	ctx := context.Background()
	topic := unique("go-bench")
	createTopic(b, topic, 1)
	p := newProducer(b, WithOption("linger_ms", "0"), WithOption("acks", "1"))
	value := make([]byte, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: value}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendAsync measures queueing one record through cgo (no wait).
func BenchmarkSendAsync(b *testing.B) {
	ctx := context.Background()
	topic := unique("go-bench-async")
	createTopic(b, topic, 1)
	p := newProducer(b, WithOption("acks", "1"))
	value := make([]byte, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: value}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := p.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPollBatch measures consuming through the packed record view
// (one cgo call per batch of up to 100 records).
func BenchmarkPollBatch(b *testing.B) {
	ctx := ctxT(b)
	topic := unique("go-bench-poll")
	createTopic(b, topic, 1)
	produceValues(b, topic, b.N)
	c := newConsumer(b, unique("go-bench-poll-group"), WithOption("max_poll_records", "100"))
	if err := c.Subscribe(ctx, topic); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for got := 0; got < b.N; {
		batch, err := c.PollBatch(ctx, 100)
		if err != nil {
			b.Fatal(err)
		}
		got += len(batch)
	}
}
