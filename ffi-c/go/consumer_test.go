// Producing and consuming through groups, commits, contexts.

package cursus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

// pollFor polls once with a deadline of d.
func pollFor(c *Consumer, d time.Duration) (*Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Poll(ctx)
}

// A poll returns with a message, at its deadline or when woken: a
// rebalance noticed while it waits, a deadline of an earlier poll, or a
// used-up wakeup are no reason to return (nil, nil).
func TestPollReturnsOnlyWithMessagesAtItsDeadlineOrWhenWoken(t *testing.T) {
	topic, group := unique("go-no-empty"), unique("go-no-empty-group")
	createTopic(t, topic, 2)
	c1 := newConsumer(t, group, WithOption("heartbeat_interval_ms", "500"))
	if err := c1.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	if m, err := pollFor(c1, 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("joining, nothing to read: want DeadlineExceeded, got %+v, %v", m, err)
	}
	// Deadlines do not wake the library: none leaks into the next poll.
	for i := 0; i < 3; i++ {
		if m, err := pollFor(c1, 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("short poll %d: want DeadlineExceeded, got %+v, %v", i, m, err)
		}
	}
	// A wakeup ends one poll, and only one.
	if err := c1.Wakeup(); err != nil {
		t.Fatal(err)
	}
	if m, err := pollFor(c1, hangGuard); m != nil || err != nil {
		t.Fatalf("woken: want (nil, nil), got %+v, %v", m, err)
	}
	if m, err := pollFor(c1, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("after the wakeup: want DeadlineExceeded, got %+v, %v", m, err)
	}
	// A second member joins: c1's heartbeat notices the rebalance while c1
	// polls; the poll rejoins and waits on to its deadline.
	c2 := newConsumer(t, group, WithOption("heartbeat_interval_ms", "500"))
	if err := c2.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	if _, err := pollFor(c2, 100*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if m, err := pollFor(c1, 2*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("across a rebalance: want DeadlineExceeded, got %+v, %v", m, err)
	}
	if parts, err := c1.Assignment(ctxT(t)); err != nil || len(parts) != 1 {
		t.Fatalf("c1 after the rebalance: %v, %v", parts, err)
	}
}
