// Transactions: visibility by isolation level, consume-process-produce,
// fencing, calls in the wrong state, contexts and callbacks.

package cursus

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// readValues returns the values of the first n records a fresh group reads
// from topic with level. Records a ReadCommitted reader must skip come first
// in the log, so the first ones it reads are the visible ones.
func readValues(t *testing.T, topic string, level IsolationLevel, n int) []string {
	t.Helper()
	c := newConsumer(t, unique("go-txn-reader"), WithIsolationLevel(level))
	if err := c.Subscribe(ctxT(t), topic); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var values []string
	for len(values) < n {
		m, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", values, err)
		}
		values = append(values, string(m.Value))
	}
	c.Close()
	return values
}

func transactional(t *testing.T, id string) *Producer {
	t.Helper()
	p := newProducer(t, WithTransactionalID(id))
	if err := p.InitTransactions(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return p
}

// sendValues sends each value to partition 0 and waits for it.
func sendValues(t *testing.T, p *Producer, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if _, err := p.Send(ctxT(t), Record{Topic: topic, Value: []byte(v)}); err != nil {
			t.Fatalf("send %s: %v", v, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantCode fails unless err is an *Error with code and matching sentinel.
func wantCode(t *testing.T, err error, code string, sentinel error) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != code || !errors.Is(err, sentinel) {
		t.Fatalf("want %s (%v), got %v", code, sentinel, err)
	}
}

func TestTransactionCommitIsVisibleToReadCommitted(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-txn-commit")
	createTopic(t, topic, 1)
	p := transactional(t, unique("go-txn"))
	must(t, p.BeginTransaction(ctx))
	sendValues(t, p, topic, "t0", "t1")
	// Open: read_uncommitted reads the records already.
	if got := readValues(t, topic, ReadUncommitted, 2); !slices.Equal(got, []string{"t0", "t1"}) {
		t.Fatalf("read_uncommitted while open: %v", got)
	}
	must(t, p.CommitTransaction(ctx))
	if got := readValues(t, topic, ReadCommitted, 2); !slices.Equal(got, []string{"t0", "t1"}) {
		t.Fatalf("read_committed: %v", got)
	}
	// The next transaction re-initialises the session by itself.
	must(t, p.BeginTransaction(ctx))
	sendValues(t, p, topic, "t2")
	must(t, p.CommitTransaction(ctx))
	if got := readValues(t, topic, ReadCommitted, 3); !slices.Equal(got, []string{"t0", "t1", "t2"}) {
		t.Fatalf("read_committed: %v", got)
	}
}

func TestTransactionAbortIsNeverVisible(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-txn-abort")
	createTopic(t, topic, 1)
	p := transactional(t, unique("go-txn"))
	must(t, p.BeginTransaction(ctx))
	sendValues(t, p, topic, "a0", "a1")
	must(t, p.AbortTransaction(ctx))
	must(t, p.BeginTransaction(ctx))
	sendValues(t, p, topic, "c0")
	must(t, p.CommitTransaction(ctx))
	if got := readValues(t, topic, ReadCommitted, 1); !slices.Equal(got, []string{"c0"}) {
		t.Fatalf("read_committed: %v", got)
	}
	if got := readValues(t, topic, ReadUncommitted, 3); !slices.Equal(got, []string{"a0", "a1", "c0"}) {
		t.Fatalf("read_uncommitted: %v", got)
	}
}

func TestTransactionConsumeProcessProduce(t *testing.T) {
	ctx := ctxT(t)
	in, out, group := unique("go-txn-in"), unique("go-txn-out"), unique("go-txn-group")
	createTopic(t, in, 1)
	createTopic(t, out, 1)
	produceValues(t, in, 3)
	c := newConsumer(t, group)
	must(t, c.Subscribe(ctx, in))
	take(t, c, 2)
	committed := func() int64 {
		t.Helper()
		off, _, err := c.Committed(ctx, in, 0)
		must(t, err)
		return off
	}

	p := transactional(t, unique("go-txn"))
	must(t, p.BeginTransaction(ctx))
	sendValues(t, p, out, "o0", "o1")
	must(t, p.SendOffsetsToTransaction(ctx, c))
	if off := committed(); off != -1 {
		t.Fatalf("staged offsets committed before the commit: %d", off)
	}
	must(t, p.CommitTransaction(ctx))
	if off := committed(); off != 2 {
		t.Fatalf("committed %d, want 2", off)
	}
	if got := readValues(t, out, ReadCommitted, 2); !slices.Equal(got, []string{"o0", "o1"}) {
		t.Fatalf("output: %v", got)
	}

	// Explicit offsets: aborted, the group's offset stays; committed, it moves.
	take(t, c, 1)
	explicit := map[TopicPartition]int64{{Topic: in, Partition: 0}: 3}
	must(t, p.BeginTransaction(ctx))
	must(t, p.SendExplicitOffsetsToTransaction(ctx, explicit, c))
	must(t, p.AbortTransaction(ctx))
	if off := committed(); off != 2 {
		t.Fatalf("after abort: committed %d, want 2", off)
	}
	must(t, p.BeginTransaction(ctx))
	err := p.SendExplicitOffsetsToTransaction(ctx, map[TopicPartition]int64{{Topic: in, Partition: 0}: -1}, c)
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an offset of -1: %v", err)
	}
	must(t, p.SendExplicitOffsetsToTransaction(ctx, explicit, c))
	must(t, p.CommitTransaction(ctx))
	if off := committed(); off != 3 {
		t.Fatalf("committed %d, want 3", off)
	}
}

func TestTransactionZombieIsFenced(t *testing.T) {
	ctx := ctxT(t)
	topic, id := unique("go-txn-zombie"), unique("go-txn")
	createTopic(t, topic, 1)
	old := transactional(t, id)
	must(t, old.BeginTransaction(ctx))
	sendValues(t, old, topic, "old")
	fresh := transactional(t, id) // fences old, aborts its transaction

	_, err := old.Send(ctx, Record{Topic: topic, Value: []byte("late")})
	wantCode(t, err, "producer_fenced", ErrFencing)
	var ce *Error
	if errors.As(err, &ce); ce.Class != "fencing" || ce.Fields["transactional_id"] != id {
		t.Fatalf("fencing error %+v", ce)
	}
	wantCode(t, old.CommitTransaction(ctx), "producer_fenced", ErrFencing)
	wantCode(t, old.BeginTransaction(ctx), "producer_fenced", ErrFencing)

	must(t, fresh.BeginTransaction(ctx))
	sendValues(t, fresh, topic, "new")
	must(t, fresh.CommitTransaction(ctx))
	if got := readValues(t, topic, ReadCommitted, 1); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("read_committed: %v", got)
	}
}

func TestTransactionCallsInTheWrongState(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-txn-state")
	createTopic(t, topic, 1)
	p := newProducer(t, WithTransactionalID(unique("go-txn")))
	wantCode(t, p.BeginTransaction(ctx), "invalid_transaction_state", ErrInvalidArgument)
	// A cancelled context starts nothing: InitTransactions never ran.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.InitTransactions(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	wantCode(t, p.BeginTransaction(ctx), "invalid_transaction_state", ErrInvalidArgument)
	must(t, p.InitTransactions(ctx))
	_, err := p.Send(ctx, Record{Topic: topic, Value: []byte("outside")})
	wantCode(t, err, "invalid_transaction_state", ErrInvalidArgument)
	wantCode(t, p.CommitTransaction(ctx), "invalid_transaction_state", ErrInvalidArgument)
	must(t, p.BeginTransaction(ctx))
	wantCode(t, p.BeginTransaction(ctx), "invalid_transaction_state", ErrInvalidArgument)
	must(t, p.AbortTransaction(ctx))

	plain := newProducer(t)
	wantCode(t, plain.InitTransactions(ctx), "invalid_transaction_state", ErrInvalidArgument)
	_, err = NewConsumer(ctx, WithBootstrap(broker), WithGroup("g"), WithIsolationLevel("serializable"))
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a bad isolation level: %v", err)
	}
	must(t, p.Close(ctx))
	if err := p.BeginTransaction(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// A cancelled call returns ctx.Err() while the operation goes on: here the
// commit's outcome cannot be delivered (the producer's callback thread is
// held by a delivery callback) until the test releases it.
func TestTransactionContextEndsTheWaitNotTheCommit(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-txn-cancel")
	createTopic(t, topic, 1)
	p := transactional(t, unique("go-txn"))
	must(t, p.BeginTransaction(ctx))
	entered, release := make(chan struct{}), make(chan struct{})
	must(t, p.SendAsync(ctx, Record{Topic: topic, Value: []byte("held")}, func(RecordMetadata, error) {
		close(entered)
		<-release
	}))
	within(t, entered, "the delivery callback")

	commitCtx, cancel := context.WithCancel(ctx)
	result := make(chan error, 1)
	go func() { result <- p.CommitTransaction(commitCtx) }()
	// The commit itself completes (read_committed sees the record) though
	// its outcome waits behind the held callback.
	if got := readValues(t, topic, ReadCommitted, 1); !slices.Equal(got, []string{"held"}) {
		t.Fatalf("read_committed: %v", got)
	}
	cancel()
	if err := within(t, result, "the cancelled commit"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled commit: %v", err)
	}
	close(release)
	// The next transaction goes on normally.
	must(t, p.BeginTransaction(ctx))
	sendValues(t, p, topic, "next")
	must(t, p.CommitTransaction(ctx))
	if got := readValues(t, topic, ReadCommitted, 2); !slices.Equal(got, []string{"held", "next"}) {
		t.Fatalf("read_committed: %v", got)
	}
}

// Inside a delivery callback of the same producer, whose callback thread
// cannot deliver another outcome until the callback returns.
func TestTransactionCallsFromACallbackOfTheProducer(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-txn-callback")
	createTopic(t, topic, 1)
	p := transactional(t, unique("go-txn"))
	must(t, p.BeginTransaction(ctx))
	done := make(chan error, 1)
	must(t, p.SendAsync(ctx, Record{Topic: topic, Value: []byte("c0")}, func(_ RecordMetadata, err error) {
		if err == nil {
			err = p.CommitTransaction(ctx)
		}
		if err == nil {
			err = p.BeginTransaction(ctx)
		}
		done <- err
	}))
	must(t, within(t, done, "the commit from a callback"))
	sendValues(t, p, topic, "c1")
	must(t, p.AbortTransaction(ctx))
	if got := readValues(t, topic, ReadCommitted, 1); !slices.Equal(got, []string{"c0"}) {
		t.Fatalf("read_committed: %v", got)
	}
}
