package cursus

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
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
	if err := a.CreateTopic(ctx, topic, partitions); err != nil {
		t.Fatal(err)
	}
}

func TestVersion(t *testing.T) {
	if Version() == "" {
		t.Fatal("empty version")
	}
}

func TestInvalidOptionIsInvalidArgument(t *testing.T) {
	_, err := NewProducer(ctxT(t), WithBootstrap(broker), WithOption("no_such_option", "1"))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error, got %v", err)
	}
	if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrValidation) || errors.Is(err, ErrRouting) {
		t.Fatalf("wrong classification: %#v", ce)
	}
	if !strings.Contains(ce.Message, "no_such_option") || ce.Retryable {
		t.Fatalf("unexpected error: %#v", ce)
	}
	if _, err := NewConsumer(ctxT(t), WithBootstrap(broker)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("consumer without group: %v", err)
	}
}

func TestAdminErrorsMatchClassSentinels(t *testing.T) {
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	topic := unique("go-admin")
	_, err = a.DeleteTopic(ctx, topic, false)
	var ce *Error
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &ce) || ce.Class != "not_found" || ce.Code == "" {
		t.Fatalf("want not_found, got %v", err)
	}
	if deleted, err := a.DeleteTopic(ctx, topic, true); err != nil || deleted {
		t.Fatalf("delete missing if_exists: %v %v", deleted, err)
	}
	if err := a.CreateTopic(ctx, topic, 2); err != nil {
		t.Fatal(err)
	}
	names, err := a.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range names {
		found = found || n == topic
	}
	if !found {
		t.Fatalf("%s not in %v", topic, names)
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
	m, err := p.Send(ctx, Record{Topic: topic, Partition: AnyPartition, Key: []byte("k"), Value: binary})
	if err != nil {
		t.Fatal(err)
	}
	if m.Partition != 0 || m.Offset != 0 || m.Topic != topic {
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
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if delivered.Load() != 20 {
		t.Fatalf("delivered %d of 20", delivered.Load())
	}

	c, err := NewConsumer(ctx, WithBootstrap(broker), WithGroup(group))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	var got []*Message
	for len(got) < 21 {
		msg, err := c.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Offset != int64(len(got)) {
			t.Fatalf("offset %d, want %d", msg.Offset, len(got))
		}
		got = append(got, msg)
	}
	if !bytes.Equal(got[0].Value, binary) || string(got[0].Key) != "k" || got[0].Topic != topic {
		t.Fatalf("first message %+v", got[0])
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
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
	c2, err := NewConsumer(ctx, WithBootstrap(broker), WithGroup(group))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	msg, err := c2.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Offset != 21 || string(msg.Value) != "after" {
		t.Fatalf("resumed at %+v", msg)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, Record{Topic: topic, Value: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
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

// BenchmarkSend measures one blocking Send through cgo (acks=1, no linger).
func BenchmarkSend(b *testing.B) {
	ctx := context.Background()
	topic := unique("go-bench")
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		b.Fatal(err)
	}
	if err := a.CreateTopic(ctx, topic, 1); err != nil {
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
	if err := a.CreateTopic(ctx, topic, 1); err != nil {
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

func TestAdminTopicManagement(t *testing.T) {
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	topic := unique("go-mgmt")
	if _, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"no_such_field": "1"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unknown field: %v", err)
	}
	created, err := a.CreateTopicWithOptions(ctx, topic, TopicOptions{"partitions": "3", "retention_hours": "24"})
	if err != nil || created.Partitions != 3 || created.Revision != 1 || created.Leaders != nil {
		t.Fatalf("create: %+v %v", created, err)
	}
	md, err := a.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if md.Partitions != 3 || md.Revision != 1 || len(md.Leaders) != 3 || md.Leaders[0] != broker {
		t.Fatalf("metadata: %+v", md)
	}
	altered, err := a.AlterTopicConfig(ctx, topic, 1)
	if err != nil || altered.MinInSyncReplicas != 1 {
		t.Fatalf("alter: %+v %v", altered, err)
	}
	altered, err = a.AlterTopicConfig(ctx, topic, DefaultMinInSyncReplicas)
	if err != nil || altered.MinInSyncReplicas != -1 {
		t.Fatalf("alter to default: %+v %v", altered, err)
	}
	offsets, err := a.ListOffsets(ctx, topic, AllPartitions)
	if err != nil || len(offsets) != 3 {
		t.Fatalf("offsets: %+v %v", offsets, err)
	}
	one, err := a.ListOffsets(ctx, topic, 2)
	if err != nil || len(one) != 1 || one[0].Partition != 2 {
		t.Fatalf("offsets of 2: %+v %v", one, err)
	}
	desc, err := a.DescribeTopic(ctx, topic)
	if err != nil || !strings.HasPrefix(desc, "{") || !strings.Contains(desc, topic) {
		t.Fatalf("describe: %q %v", desc, err)
	}
	if md, err = a.Metadata(ctx, topic); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TruncateTopic(ctx, topic, md.Revision+100); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale truncate: %v", err)
	}
	tr, err := a.TruncateTopic(ctx, topic, md.Revision)
	if err != nil || tr.Revision != md.Revision+1 {
		t.Fatalf("truncate: %+v %v", tr, err)
	}
	help, err := a.Help(ctx)
	if err != nil || !slices.Contains(help, "PUBLISH") {
		t.Fatalf("help: %v %v", help, err)
	}
	if _, err := a.ListGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DescribeTopic(ctx, unique("go-missing")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("describe missing: %v", err)
	}
}

func TestConsumerPatternCommitAsyncAndGroupStatus(t *testing.T) {
	ctx := ctxT(t)
	prefix, group := unique("go-pat"), unique("go-pat-group")
	topic := prefix + "-orders"
	createTopic(t, topic, 2)
	p, err := NewProducer(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for i := 0; i < 3; i++ {
		if _, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewConsumer(ctx, WithBootstrap(broker), WithGroup(group), WithOption("fetch_max_wait_ms", "50"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SubscribePattern(ctx, prefix+"-*"); err != nil {
		t.Fatal(err)
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
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if off, found, err := c.Committed(ctx, topic, 0); err != nil || !found || off != 3 {
		t.Fatalf("committed: %d %v %v", off, found, err)
	}
	if err := c.CommitAsync(ctx, nil); err != nil {
		t.Fatal(err)
	}
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	groups, err := a.ListGroups(ctx)
	if err != nil || !slices.Contains(groups, group) {
		t.Fatalf("groups: %v %v", groups, err)
	}
	status, err := a.GroupStatus(ctx, group)
	if err != nil || !strings.Contains(status, group) {
		t.Fatalf("group status: %q %v", status, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitAsync(ctx, func(error) { t.Error("callback after a failed start") }); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}
}

func TestCommitOffsetsExplicit(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-commit-offsets"), unique("go-commit-offsets-group")
	createTopic(t, topic, 2)
	p, err := NewProducer(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	for i := 0; i < 4; i++ {
		if _, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	opts := []Option{WithBootstrap(broker), WithGroup(group), WithOption("auto_offset_reset", "earliest")}
	c, err := NewConsumer(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	// Not joined yet (no poll): nothing to commit against.
	err = c.CommitOffsets(ctx, map[TopicPartition]int64{{topic, 0}: 1})
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
	second, err := NewConsumer(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
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

func TestDeleteTopicReportsDeleted(t *testing.T) {
	ctx := ctxT(t)
	a, err := NewAdmin(ctx, WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	topic := unique("go-delete")
	createTopic(t, topic, 1)
	if deleted, err := a.DeleteTopic(ctx, topic, true); err != nil || !deleted {
		t.Fatalf("delete existing: %v %v", deleted, err)
	}
	if deleted, err := a.DeleteTopic(ctx, topic, true); err != nil || deleted {
		t.Fatalf("delete again: %v %v", deleted, err)
	}
}
