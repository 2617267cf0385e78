// Language edges: callbacks that call back, blocked callbacks, close and wakeup during a poll, delivery accounting.

package cursus

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

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
