package cursus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// replayTopic creates an aggregate replay topic (event_sourcing,
// idempotent, aggregate_replay) of two partitions.
func replayTopic(t testing.TB, prefix string) string {
	t.Helper()
	topic := unique(prefix)
	info, err := newAdmin(t).CreateTopicWithOptions(ctxT(t), topic, TopicOptions{"partitions": "2",
		"event_sourcing": "true", "idempotent": "true", "aggregate_replay": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if !info.AggregateReplay || !info.EventSourcing {
		t.Fatalf("created topic %+v is not an aggregate replay topic", info)
	}
	return topic
}

func TestReplayEventIDAndExactRetry(t *testing.T) {
	topic := replayTopic(t, "go-replay-retry")
	s := newEventStore(t)
	ev := Event{Type: "Started", Payload: "kickoff", Metadata: `{"by":"ref"}`, SchemaVersion: 2, ID: "ev-1"}
	first := mustAppend(t, s, topic, "m1", 0, ev)
	if first.Version != 1 {
		t.Fatalf("first: %+v", first)
	}
	// The exact retry is answered with the original offset.
	if again := mustAppend(t, s, topic, "m1", 0, ev); again != first {
		t.Fatalf("retry: %+v, first %+v", again, first)
	}
	read, err := s.ReadStream(ctxT(t), topic, "m1", 1)
	must(t, err)
	if len(read.Events) != 1 {
		t.Fatalf("events: %+v", read.Events)
	}
	e := read.Events[0]
	if e.Type != "Started" || e.Metadata != `{"by":"ref"}` || e.SchemaVersion != 2 || e.Offset != first.Offset {
		t.Fatalf("event: %+v", e)
	}
	// An id is non-empty text without whitespace or NUL.
	for _, bad := range []string{"ev 2", "ev\x002"} {
		_, err := s.Append(ctxT(t), topic, "m1", 1, Event{Type: "T", Payload: "p", ID: bad})
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("id %q: %v", bad, err)
		}
	}
	// Concurrent exact retries all get the original offset.
	var wg sync.WaitGroup
	got := make([]Appended, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got[i], errs[i] = s.Append(ctxT(t), topic, "m1", 0, ev)
		}(i)
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != first {
			t.Fatalf("retry %d: %+v %v", i, got[i], errs[i])
		}
	}
	if v, err := s.StreamVersion(ctxT(t), topic, "m1"); err != nil || v != 1 {
		t.Fatalf("version %d %v", v, err)
	}
}

func TestReplayIdentityConflict(t *testing.T) {
	topic := replayTopic(t, "go-replay-conflict")
	s := newEventStore(t)
	mustAppend(t, s, topic, "m2", 0, Event{Type: "Started", Payload: "kickoff", ID: "ev-a"})
	_, err := s.Append(ctxT(t), topic, "m2", 0, Event{Type: "Started", Payload: "other payload", ID: "ev-a"})
	wantCode(t, err, "aggregate_identity_conflict", ErrConflict)
	if ProofFromError(err) != nil {
		t.Fatalf("a proof on %v", err)
	}
	_, err = s.Append(ctxT(t), topic, "m2", 0, Event{Type: "Started", Payload: "kickoff", ID: "ev-b"})
	wantCode(t, err, "aggregate_identity_conflict", ErrConflict)
	if v, err := s.StreamVersion(ctxT(t), topic, "m2"); err != nil || v != 1 {
		t.Fatalf("version %d %v", v, err)
	}
}

func TestReplayProof(t *testing.T) {
	topic := replayTopic(t, "go-replay-proof")
	s := newEventStore(t)
	var last Appended
	for i := 1; i <= 3; i++ {
		last = mustAppend(t, s, topic, "m3", uint64(i-1),
			Event{Type: "Scored", Payload: fmt.Sprintf("goal %d", i), ID: fmt.Sprintf("m3-%d", i)})
	}
	p, err := s.ReplayProof(ctxT(t), topic, "m3")
	must(t, err)
	if !p.Complete() || p.Diagnostic != "" || p.Partition != last.Partition || p.EventCount != 3 ||
		p.EarliestSequence != 1 || p.LatestSequence != 3 || p.LastOffset != last.Offset ||
		p.FirstOffset >= p.LastOffset || p.HWM <= p.LastOffset || p.FirstEventID != "m3-1" ||
		p.LastEventID != "m3-3" || !p.SequenceComplete || !p.RetentionComplete {
		t.Fatalf("proof: %+v", p)
	}
	if p, err := s.ReplayProofExpecting(ctxT(t), topic, "m3", 3); err != nil || !p.Complete() {
		t.Fatalf("expected 3: %+v %v", p, err)
	}
	// 0 is no sequence: the library's invalid_argument, as in every language.
	_, err = s.ReplayProofExpecting(ctxT(t), topic, "m3", 0)
	wantCode(t, err, "invalid_argument", ErrInvalidArgument)
	// A wrong expected last sequence: the proof rides on the error.
	_, err = s.ReplayProofExpecting(ctxT(t), topic, "m3", 9)
	wantCode(t, err, "aggregate_proof_proof_unavailable", ErrInternal)
	var pe *ProofError
	if !errors.As(err, &pe) || pe.Proof.Status != "proof_unavailable" || pe.Proof.EventCount != 3 ||
		pe.Proof.LastEventID != "m3-3" || pe.Proof.Complete() {
		t.Fatalf("proof error: %#v", err)
	}
	// An unknown aggregate: not_found.
	_, err = s.ReplayProof(ctxT(t), topic, "nobody")
	wantCode(t, err, "aggregate_proof_not_found", ErrNotFound)
	if got := ProofFromError(err); got == nil || got.Status != "not_found" || got.EventCount != 0 {
		t.Fatalf("not found proof: %+v", got)
	}
	// A topic without aggregate_replay.
	plain := esTopic(t, "go-replay-plain", 1)
	mustAppend(t, s, plain, "k", 0, Event{Type: "T", Payload: "one", ID: "id-1"})
	_, err = s.ReplayProof(ctxT(t), plain, "k")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "aggregate_replay_not_enabled" || ProofFromError(err) != nil {
		t.Fatalf("plain topic: %v", err)
	}
	// A cancelled context.
	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	if _, err := s.ReplayProof(ctx, topic, "m3"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestReplayEventRange(t *testing.T) {
	topic := replayTopic(t, "go-replay-range")
	s := newEventStore(t)
	var appended []Appended
	for i := 1; i <= 4; i++ {
		appended = append(appended, mustAppend(t, s, topic, "m4", uint64(i-1),
			Event{Type: "Scored", Payload: fmt.Sprintf("goal %d", i), ID: fmt.Sprintf("m4-%d", i)}))
	}
	r, err := s.EventRange(ctxT(t), topic, "m4", 2, 3, 0)
	must(t, err)
	if !r.Proof.Complete() || r.Proof.EventCount != 4 || len(r.Events) != 2 {
		t.Fatalf("range: %+v", r)
	}
	for i, e := range r.Events {
		want := RangeEvent{Offset: appended[i+1].Offset, Sequence: uint64(i + 2), ID: fmt.Sprintf("m4-%d", i+2),
			Type: "Scored", Payload: fmt.Sprintf("goal %d", i+2)}
		if e != want {
			t.Fatalf("event %d: %+v, want %+v", i, e, want)
		}
	}
	if r, err := s.EventRange(ctxT(t), topic, "m4", 1, 4, 2); err != nil || len(r.Events) != 2 ||
		r.Events[1].Sequence != 2 {
		t.Fatalf("bounded: %+v %v", r, err)
	}
	_, err = s.EventRange(ctxT(t), topic, "m4", 3, 9, 0)
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "aggregate_range_incomplete" {
		t.Fatalf("past the end: %v", err)
	}
}

func TestTransactionAppendStreamCommit(t *testing.T) {
	topic := esTopic(t, "go-txn-stream-commit", 1)
	s := newEventStore(t)
	mustAppend(t, s, topic, "acct", 0, Event{Type: "Opened", Payload: "open"})
	p := transactional(t, unique("go-txn-stream"))
	must(t, p.BeginTransaction(ctxT(t)))
	a, err := p.AppendStream(ctxT(t), topic, "acct", 1, Event{Type: "Credited", Payload: "credit 3", ID: "credit-1"})
	must(t, err)
	if a.Version != 2 {
		t.Fatalf("appended: %+v", a)
	}
	// Invisible until the commit; the aggregate is reserved.
	if v, err := s.StreamVersion(ctxT(t), topic, "acct"); err != nil || v != 1 {
		t.Fatalf("version before commit %d %v", v, err)
	}
	_, err = s.Append(ctxT(t), topic, "acct", 1, Event{Type: "Debited", Payload: "race"})
	wantCode(t, err, "stream_version_reserved", ErrConflict)
	must(t, p.CommitTransaction(ctxT(t)))
	read, err := s.ReadStream(ctxT(t), topic, "acct", 1)
	must(t, err)
	if got := eventPayloads(read.Events); len(got) != 2 || got[1] != "credit 3" || read.Events[1].Offset != a.Offset ||
		read.Events[1].Version != 2 || read.Events[1].Type != "Credited" {
		t.Fatalf("after commit: %+v", read.Events)
	}
	if got := mustAppend(t, s, topic, "acct", 2, Event{Type: "Debited", Payload: "after"}); got.Version != 3 {
		t.Fatalf("after: %+v", got)
	}
}

func TestTransactionAppendStreamAbort(t *testing.T) {
	topic := esTopic(t, "go-txn-stream-abort", 1)
	s := newEventStore(t)
	mustAppend(t, s, topic, "acct", 0, Event{Type: "Opened", Payload: "open"})
	p := transactional(t, unique("go-txn-stream"))
	never := Event{Type: "Credited", Payload: "never"}
	// Outside a transaction: refused.
	_, err := p.AppendStream(ctxT(t), topic, "acct", 1, never)
	wantCode(t, err, "invalid_transaction_state", ErrInvalidArgument)
	must(t, p.BeginTransaction(ctxT(t)))
	if a, err := p.AppendStream(ctxT(t), topic, "acct", 1, never); err != nil || a.Version != 2 {
		t.Fatalf("append: %+v %v", a, err)
	}
	must(t, p.AbortTransaction(ctxT(t)))
	if v, err := s.StreamVersion(ctxT(t), topic, "acct"); err != nil || v != 1 {
		t.Fatalf("version after abort %d %v", v, err)
	}
	if got := mustAppend(t, s, topic, "acct", 1, Event{Type: "Debited", Payload: "after"}); got.Version != 2 {
		t.Fatalf("after: %+v", got)
	}
	// A producer without a transactional id.
	_, err = newProducer(t).AppendStream(ctxT(t), topic, "acct", 2, never)
	wantCode(t, err, "invalid_transaction_state", ErrInvalidArgument)
	// An aggregate's append keeps the caller's id; the library refuses a bad one.
	agg, err := LoadAggregate(ctxT(t), s, topic, "acct", counterConfig(0, nil))
	must(t, err)
	stored, err := agg.Append(ctxT(t), Event{Type: "T", Payload: "x", ID: "agg-id-3"})
	must(t, err)
	if _, err := agg.Append(ctxT(t), Event{Type: "T", Payload: "y", ID: "two words"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("aggregate with a bad id: %v", err)
	}
	page, err := s.History(topic, "acct", stored.Version, stored.Version, PageLimits{})
	must(t, err)
	read, err := page.ReadAll(ctxT(t))
	must(t, err)
	if len(read.Events) != 1 || read.Events[0].Offset != stored.Offset || stored.Version != 3 || agg.Version() != 3 {
		t.Fatalf("stored %+v, read %+v", stored, read.Events)
	}
}
