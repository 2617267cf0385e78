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

// TestMain starts a real cursus-broker ($CURSUS_BROKER_BIN, or an already
// running one at $CURSUS_TEST_BROKER) with a temporary data directory.
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
	go func() {
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

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func createTopic(t *testing.T, topic string, partitions int) {
	t.Helper()
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.CreateTopic(ctx, topic, partitions); err != nil {
		t.Fatal(err)
	}
}

func produceValues(t *testing.T, topic string, n int) {
	t.Helper()
	ctx := ctxT(t)
	p, err := NewProducer(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for i := 0; i < n; i++ {
		if err := p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func newConsumer(t *testing.T, group string, opts ...Option) *Consumer {
	t.Helper()
	opts = append([]Option{WithBootstrap(broker), WithGroup(group), WithOption("fetch_max_wait_ms", "50")}, opts...)
	c, err := NewConsumer(ctxT(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// take polls until n messages arrived and returns their offsets.
func take(t *testing.T, c *Consumer, n int) []int64 {
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

func TestVersion(t *testing.T) {
	if Version == "" || LibraryVersion() != Version {
		t.Fatalf("package %q, library %q", Version, LibraryVersion())
	}
}

func TestOptionErrorsNameTheKindAndItsOptions(t *testing.T) {
	_, err := NewProducer(ctxT(t), WithBootstrap(broker), WithOption("group_id", "g"))
	var ce *Error
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrValidation) || errors.Is(err, ErrRouting) {
		t.Fatalf("wrong classification: %v", err)
	}
	want := `invalid_argument (validation): unknown producer option "group_id"; known options: acks, `
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "linger_ms") || strings.Contains(err.Error(), "group_id,") {
		t.Fatalf("message %q", err.Error())
	}
	if ce.Retryable || ce.Kind != "invalid_argument" {
		t.Fatalf("unexpected error: %#v", ce)
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
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ce) || ce.Fields["topic"] != topic {
		t.Fatalf("want not_found, got %v", err)
	}
	if want := "topic_not_found (not_found): topic=" + topic; err.Error() != want {
		t.Fatalf("error text %q, want %q", err.Error(), want)
	}
	if r, err := a.DeleteTopic(ctx, topic, true); err != nil || r.Deleted {
		t.Fatalf("delete missing if_exists: %+v %v", r, err)
	}
	if _, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"no_such_field": "1"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad option: %v", err)
	}
	info, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"partitions": "3", "read_acl": "alice,bob"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != topic || info.Partitions != 3 || !slices.Equal(info.ReadACL, []string{"alice", "bob"}) || info.MinInSyncReplicas != -1 {
		t.Fatalf("created %+v", info)
	}
	if altered, err := a.AlterTopicConfig(ctx, topic, 1); err != nil || altered.MinInSyncReplicas != 1 {
		t.Fatalf("altered %+v %v", altered, err)
	}
	desc, err := a.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Topic != topic || desc.Definition.Partitions != 3 || len(desc.Partitions) != 3 || desc.Partitions[0].Leader != broker {
		t.Fatalf("described %+v", desc)
	}
	md, err := a.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if md.Topic.Partitions != 3 || len(md.Leaders) != 3 || md.Leaders[2] != broker {
		t.Fatalf("metadata %+v", md)
	}
	offsets, err := a.ListOffsets(ctx, topic, -1)
	if err != nil || len(offsets) != 3 {
		t.Fatalf("offsets %+v %v", offsets, err)
	}
	if _, err := a.TruncateTopic(ctx, topic, md.Topic.Revision+100); !errors.Is(err, ErrConflict) {
		t.Fatalf("want conflict, got %v", err)
	}
	if tr, err := a.TruncateTopic(ctx, topic, md.Topic.Revision); err != nil || tr.Revision != md.Topic.Revision+1 {
		t.Fatalf("truncated %+v %v", tr, err)
	}
	names, err := a.ListTopics(ctx)
	if err != nil || !slices.Contains(names, topic) {
		t.Fatalf("%s not in %v (%v)", topic, names, err)
	}
	if help, err := a.Help(ctx); err != nil || !slices.Contains(help, "PUBLISH") {
		t.Fatalf("help %v %v", help, err)
	}
	if r, err := a.DeleteTopic(ctx, topic, false); err != nil || !r.Deleted {
		t.Fatalf("delete %+v %v", r, err)
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
	// Concurrent async sends from several goroutines.
	var wg sync.WaitGroup
	var delivered atomic.Int32
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				err := p.SendAsync(ctx, Record{Topic: topic, Partition: AnyPartition, Value: []byte(fmt.Sprintf("g%d-%d", g, i))},
					func(_ RecordMetadata, err error) {
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
	if !bytes.Equal(first.Value, binary) || string(first.Key) != "k" || first.Topic != topic || first.Offset != 0 {
		t.Fatalf("first message %+v", first)
	}
	var got []Message
	for len(got) < 20 {
		batch, err := c.PollBatch(ctx, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) > 7 {
			t.Fatalf("batch of %d, max 7", len(batch))
		}
		got = append(got, batch...)
	}
	for i, msg := range got {
		if msg.Offset != int64(i+1) || msg.Topic != topic {
			t.Fatalf("message %d: %+v", i, msg)
		}
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
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, Record{Topic: topic, Value: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
}

func TestCommitAsyncOffsetsAndGroupStatus(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-commits"), unique("go-commits-group")
	createTopic(t, topic, 2)
	produceValues(t, topic, 4)
	c := newConsumer(t, group)
	defer c.Close()
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	take(t, c, 2)
	done := make(chan error, 1)
	if err := c.CommitAsync(ctx, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("commit callback never ran")
	}
	if off, _, err := c.Committed(ctx, topic, 0); err != nil || off != 2 {
		t.Fatalf("committed %d %v", off, err)
	}
	if err := c.CommitOffsets(ctx, map[TopicPartition]int64{{topic, 0}: 3, {topic, 1}: 0}); err != nil {
		t.Fatal(err)
	}
	if off, ok, err := c.Committed(ctx, topic, 1); err != nil || !ok || off != 0 {
		t.Fatalf("committed p1 %d %v %v", off, ok, err)
	}
	parts, err := c.Assignment(ctx)
	if err != nil || len(parts) != 2 {
		t.Fatalf("assignment %v %v", parts, err)
	}
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	status, err := a.GroupStatus(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if status.Group != group || len(status.Members) != 1 || len(status.Members[0].Assignments) != 2 {
		t.Fatalf("group status %+v", status)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewProducer(ctx, WithBootstrap(broker)); !errors.Is(err, context.Canceled) {
		t.Fatalf("want Canceled, got %v", err)
	}
	p, err := NewProducer(ctxT(t), WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctxT(t))
	if _, err := p.Send(ctx, Record{Topic: "x", Value: []byte("x")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("want Canceled, got %v", err)
	}
}

func TestContextDeadlineBoundsConnecting(t *testing.T) {
	// A server that accepts connections and never answers the handshake.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_, err = NewProducer(ctx, WithBootstrap(l.Addr().String()))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want DeadlineExceeded, got %v", err)
	}
	// Well before the 5 s connect timeout (a generous bound, not a measurement).
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Fatalf("returned after %v", elapsed)
	}
}

func TestSendToMissingTopicIsNotFound(t *testing.T) {
	ctx := ctxT(t)
	p, err := NewProducer(ctx, WithBootstrap(broker), WithOption("retries", "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	_, err = p.Send(ctx, Record{Topic: unique("go-missing"), Partition: AnyPartition, Value: []byte("x")})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
}

func TestCallbackMaySendAndFlushItsProducer(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-reentry")
	createTopic(t, topic, 1)
	p, err := NewProducer(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	type outcome struct {
		offset     int64
		send, fail error
	}
	done := make(chan outcome, 1)
	err = p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: []byte("outer")}, func(_ RecordMetadata, err error) {
		if err != nil {
			done <- outcome{fail: err}
			return
		}
		m, sendErr := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte("inner")})
		done <- outcome{offset: m.Offset, send: sendErr, fail: p.Flush(ctx)}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-done:
		if o.send != nil || o.fail != nil || o.offset != 1 {
			t.Fatalf("inside the callback: %+v", o)
		}
	case <-time.After(hangGuard):
		t.Fatal("the callback never finished")
	}
}

func TestBlockedCallbackDoesNotStallAnotherProducer(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-slow-cb")
	createTopic(t, topic, 1)
	slow, err := NewProducer(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close(ctx)
	fast, err := NewProducer(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close(ctx)
	entered, release, otherRan := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(release)
	if err := slow.SendAsync(ctx, Record{Topic: topic, Value: []byte("a")}, func(RecordMetadata, error) {
		close(entered)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := fast.SendAsync(ctx, Record{Topic: topic, Value: []byte("b")}, func(RecordMetadata, error) { close(otherRan) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-otherRan: // ran while the first producer's callback is still blocked
	case <-time.After(hangGuard):
		t.Fatal("a blocked callback held up another producer")
	}
}

func TestCloseAndWakeupInterruptABlockedPoll(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-idle")
	createTopic(t, topic, 1)
	c := newConsumer(t, unique("go-idle-group"))
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	type result struct {
		m   *Message
		err error
	}
	polled := make(chan result, 1)
	go func() {
		m, err := c.Poll(context.Background())
		polled <- result{m, err}
	}()
	if err := c.Wakeup(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-polled:
		if r.m != nil || r.err != nil {
			t.Fatalf("after Wakeup: %+v", r)
		}
	case <-time.After(hangGuard):
		t.Fatal("Wakeup did not end the poll")
	}
	go func() {
		m, err := c.Poll(context.Background())
		polled <- result{m, err}
	}()
	time.Sleep(200 * time.Millisecond) // lets the poll block; correct either way
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Close did not return while Poll was blocked")
	}
	select {
	case r := <-polled:
		if !errors.Is(r.err, ErrClosed) {
			t.Fatalf("the blocked poll returned %+v", r)
		}
	case <-time.After(hangGuard):
		t.Fatal("the blocked poll never returned")
	}
}

func TestCloseCommitsOnlyTheMessagesTaken(t *testing.T) {
	topic, group := unique("go-taken"), unique("go-taken-group")
	createTopic(t, topic, 1)
	produceValues(t, topic, 10)
	opts := []Option{WithOption("enable_auto_commit", "true"), WithOption("max_poll_records", "10")}
	first := newConsumer(t, group, opts...)
	if err := first.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	if got := take(t, first, 3); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("took %v", got)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := newConsumer(t, group, opts...)
	defer second.Close()
	if err := second.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	if got := take(t, second, 7); !slices.Equal(got, []int64{3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("the new member got %v", got)
	}
}

// BenchmarkSend measures one blocking Send through cgo (acks=1, no linger).
func BenchmarkSend(b *testing.B) {
	ctx := context.Background()
	topic := unique("go-bench")
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.CreateTopic(ctx, topic, 1); err != nil {
		b.Fatal(err)
	}
	p, err := NewProducer(ctx, WithBootstrap(broker), WithOption("linger_ms", "0"), WithOption("acks", "1"))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
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
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.CreateTopic(ctx, topic, 1); err != nil {
		b.Fatal(err)
	}
	p, err := NewProducer(ctx, WithBootstrap(broker), WithOption("acks", "1"))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
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
