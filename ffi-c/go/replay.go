package cursus

// #include <stdlib.h>
// #include "cursus.h"
import "C"

import (
	"context"
	"errors"
	"math"
	"runtime"
)

// Event ids, aggregate replay proofs and range reads, and transactional
// stream appends (docs/aggregate-replay.md in the SDK).

// ReplayProof is what the broker proved about an aggregate's retained
// events on an aggregate replay topic (a topic created with
// event_sourcing, idempotent and aggregate_replay).
type ReplayProof struct {
	// Status is "complete", "not_found", "retention_gap", "sequence_gap",
	// "identity_conflict" or "proof_unavailable".
	Status string
	// Diagnostic says why the proof is not complete (empty when it is).
	Diagnostic string
	// Partition is the aggregate's partition.
	Partition uint32
	// EventCount is how many events were found.
	EventCount uint64
	// EarliestSequence and LatestSequence are the lowest and highest
	// retained sequences (0 when none).
	EarliestSequence uint64
	LatestSequence   uint64
	// FirstOffset and LastOffset are the offsets of the first and last
	// retained events.
	FirstOffset uint64
	LastOffset  uint64
	// FirstEventID and LastEventID are the first and last events' ids.
	FirstEventID string
	LastEventID  string
	// SequenceComplete: the sequences increase by exactly one.
	SequenceComplete bool
	// RetentionComplete: the retained events start at sequence 1.
	RetentionComplete bool
	// HWM is the committed offset the proof covers.
	HWM uint64
}

// Complete tells whether every retained event from sequence 1 on was
// verified (Status "complete").
func (p ReplayProof) Complete() bool { return p.Status == "complete" }

// RangeEvent is one event of a range read.
type RangeEvent struct {
	// Offset is its offset in the partition.
	Offset uint64
	// Sequence is its sequence (aggregate version).
	Sequence uint64
	// ID, Type and Payload are its event id, event type and payload text.
	ID      string
	Type    string
	Payload string
}

// EventRange is a range read: the events, and the complete proof they
// were read under.
type EventRange struct {
	Proof  ReplayProof
	Events []RangeEvent
}

// ProofError is the error of a replay proof or range read whose proof is
// not complete (code "aggregate_proof_<status>" or
// "aggregate_range_<status>"): Proof is what the broker proved. It wraps
// the *Error, so errors.As to *Error and errors.Is with the class
// sentinels hold (aggregate_proof_not_found is of class not_found, the
// others of class internal).
type ProofError struct {
	// Proof is the proof the failure carried.
	Proof ReplayProof
	// Err is the error as the library reported it.
	Err *Error
}

// Error returns the readable text of Err.
func (e *ProofError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *ProofError) Unwrap() error { return e.Err }

// ProofFromError returns the proof a failed ReplayProof or EventRange
// carried, or nil when err carries none.
func ProofFromError(err error) *ReplayProof {
	var pe *ProofError
	if errors.As(err, &pe) {
		p := pe.Proof
		return &p
	}
	return nil
}

// proofFrom reads a proof handle and destroys it.
func proofFrom(h *C.cursus_replay_proof_t) ReplayProof {
	defer C.cursus_replay_proof_destroy(h)
	return ReplayProof{
		Status:            goString(C.cursus_replay_proof_status(h)),
		Diagnostic:        goString(C.cursus_replay_proof_diagnostic(h)),
		Partition:         uint32(C.cursus_replay_proof_partition(h)),
		EventCount:        uint64(C.cursus_replay_proof_event_count(h)),
		EarliestSequence:  uint64(C.cursus_replay_proof_earliest_sequence(h)),
		LatestSequence:    uint64(C.cursus_replay_proof_latest_sequence(h)),
		FirstOffset:       uint64(C.cursus_replay_proof_first_offset(h)),
		LastOffset:        uint64(C.cursus_replay_proof_last_offset(h)),
		FirstEventID:      goString(C.cursus_replay_proof_first_event_id(h)),
		LastEventID:       goString(C.cursus_replay_proof_last_event_id(h)),
		SequenceComplete:  bool(C.cursus_replay_proof_sequence_complete(h)),
		RetentionComplete: bool(C.cursus_replay_proof_retention_complete(h)),
		HWM:               uint64(C.cursus_replay_proof_hwm(h)),
	}
}

// proofCheck is check, but a failure that carries a proof is a *ProofError.
func proofCheck(st C.enum_cursus_status_t, e *C.cursus_error_t) error {
	var proof *ReplayProof
	if Status(st) != StatusOK && e != nil {
		var h *C.cursus_replay_proof_t
		if C.cursus_replay_proof_from_error(e, &h, nil) == C.CURSUS_OK && h != nil {
			p := proofFrom(h)
			proof = &p
		}
	}
	err := check(st, e)
	var ce *Error
	if proof != nil && errors.As(err, &ce) {
		return &ProofError{Proof: *proof, Err: ce}
	}
	return err
}

// builder makes an event builder for ev (destroy it with
// C.cursus_event_builder_destroy); a NUL byte or a bad ID fails with
// ErrInvalidArgument.
func builder(ev Event) (*C.cursus_event_builder_t, error) {
	args, free, err := cTexts("event type", ev.Type, "payload", ev.Payload, "metadata", ev.Metadata, "event id", ev.ID)
	if err != nil {
		return nil, err
	}
	defer free()
	var b *C.cursus_event_builder_t
	var e *C.cursus_error_t
	if err := check(C.cursus_event_builder_new(args[0], args[1], &b, &e), e); err != nil {
		return nil, err
	}
	fail := func(err error) (*C.cursus_event_builder_t, error) {
		C.cursus_event_builder_destroy(b)
		return nil, err
	}
	if ev.Metadata != "" {
		if err := check(C.cursus_event_builder_set_metadata(b, args[2], &e), e); err != nil {
			return fail(err)
		}
	}
	if ev.SchemaVersion != 0 {
		if err := check(C.cursus_event_builder_set_schema_version(b, C.uint32_t(ev.SchemaVersion), &e), e); err != nil {
			return fail(err)
		}
	}
	if ev.ID != "" {
		if err := check(C.cursus_event_builder_set_event_id(b, args[3], &e), e); err != nil {
			return fail(err)
		}
	}
	return b, nil
}

// appendEvent appends ev (with its ID) through an event builder.
func (s *EventStore) appendEvent(ctx context.Context, topic, key string, expectedVersion uint64, ev Event) (Appended, error) {
	b, err := builder(ev)
	if err != nil {
		return Appended{}, err
	}
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		C.cursus_event_builder_destroy(b)
		return Appended{}, err
	}
	release := func() {
		free()
		C.cursus_event_builder_destroy(b)
	}
	return storeCall(ctx, s, release, func(e **C.cursus_error_t) (Appended, C.enum_cursus_status_t) {
		var a *C.cursus_appended_t
		st := C.cursus_event_store_append_event(s.h, args[0], args[1], C.uint64_t(expectedVersion), b, &a, e)
		return appendedFrom(a), st
	})
}

// appendedFrom reads an appended handle (zero for nil) and destroys it.
func appendedFrom(a *C.cursus_appended_t) Appended {
	defer C.cursus_appended_destroy(a)
	return readAppended(a)
}

// proofCall runs one proof or range request bounded by ctx (as storeCall,
// with proofCheck).
func proofCall[T any](ctx context.Context, s *EventStore, free func(),
	f func(e **C.cursus_error_t) (T, C.enum_cursus_status_t)) (T, error) {
	return detached(ctx, func() (T, error) {
		defer free()
		defer runtime.KeepAlive(s)
		var e *C.cursus_error_t
		v, st := f(&e)
		return v, proofCheck(st, e)
	}, nil)
}

// ReplayProof proves that aggregate matchID's retained events on an
// aggregate replay topic are exactly sequences 1..last with verified
// digests and unique ids. It returns the complete proof; a proof that is
// not complete fails with a *ProofError (ProofFromError reads its proof). A
// topic without aggregate_replay fails with code
// "aggregate_replay_not_enabled".
func (s *EventStore) ReplayProof(ctx context.Context, topic, matchID string) (ReplayProof, error) {
	return s.replayProof(ctx, topic, matchID, -1)
}

// ReplayProofExpecting is ReplayProof that also proves last is
// expectedLast: a different last fails with code
// "aggregate_proof_proof_unavailable". expectedLast 0 fails with
// ErrInvalidArgument (sequences start at 1; ReplayProof expects nothing),
// as in every Cursus language.
func (s *EventStore) ReplayProofExpecting(ctx context.Context, topic, matchID string, expectedLast uint64) (ReplayProof, error) {
	return s.replayProof(ctx, topic, matchID, int64(min(expectedLast, math.MaxInt64)))
}

// replayProof asks for the proof; expectedLast -1: no expectation.
func (s *EventStore) replayProof(ctx context.Context, topic, matchID string, expectedLast int64) (ReplayProof, error) {
	if err := ctx.Err(); err != nil {
		return ReplayProof{}, err
	}
	args, free, err := cTexts("topic", topic, "match id", matchID)
	if err != nil {
		return ReplayProof{}, err
	}
	return proofCall(ctx, s, free, func(e **C.cursus_error_t) (ReplayProof, C.enum_cursus_status_t) {
		var h *C.cursus_replay_proof_t
		st := C.cursus_event_store_replay_proof(s.h, args[0], args[1], C.int64_t(expectedLast), &h, e)
		if h == nil {
			return ReplayProof{}, st
		}
		return proofFrom(h), st
	})
}

// EventRange reads the events of aggregate matchID with sequences from
// to to (at most maxRecords; 0: the broker's 1,000) under a complete
// proof. A proof that is not complete fails with a *ProofError (code
// "aggregate_range_<status>"); fewer events than asked for (e.g. to past
// the last sequence) fail with code "aggregate_range_incomplete".
func (s *EventStore) EventRange(ctx context.Context, topic, matchID string, from, to uint64, maxRecords uint32) (EventRange, error) {
	if err := ctx.Err(); err != nil {
		return EventRange{}, err
	}
	args, free, err := cTexts("topic", topic, "match id", matchID)
	if err != nil {
		return EventRange{}, err
	}
	return proofCall(ctx, s, free, func(e **C.cursus_error_t) (EventRange, C.enum_cursus_status_t) {
		var r *C.cursus_event_range_t
		st := C.cursus_event_store_event_range(s.h, args[0], args[1], C.uint64_t(from), C.uint64_t(to),
			C.uint32_t(maxRecords), &r, e)
		if r == nil {
			return EventRange{}, st
		}
		defer C.cursus_event_range_destroy(r)
		var out EventRange
		var h *C.cursus_replay_proof_t
		if C.cursus_event_range_proof(r, &h, nil) == C.CURSUS_OK && h != nil {
			out.Proof = proofFrom(h)
		}
		n := C.cursus_event_range_count(r)
		out.Events = make([]RangeEvent, 0, int(n))
		for i := C.size_t(0); i < n; i++ {
			out.Events = append(out.Events, RangeEvent{
				Offset:   uint64(C.cursus_event_range_offset(r, i)),
				Sequence: uint64(C.cursus_event_range_sequence(r, i)),
				ID:       goString(C.cursus_event_range_event_id(r, i)),
				Type:     goString(C.cursus_event_range_event_type(r, i)),
				Payload:  goString(C.cursus_event_range_payload(r, i)),
			})
		}
		return out, st
	})
}

// AppendStream appends ev to aggregate key of an event-sourcing topic
// inside the producer's open transaction (TXN_APPEND_STREAM): it becomes
// version expectedVersion + 1 when the transaction commits, together with
// the transaction's records and offsets, and never if it aborts. Until
// then it is invisible to readers and the aggregate is reserved (other
// writers fail with code "stream_version_reserved"). The returned
// Appended is the version and offset it will have. A failure makes the
// transaction abort-only, as a failed send does; outside a transaction (or
// on a producer without a transactional id) it fails with
// ErrInvalidArgument, code "invalid_transaction_state". Cancelling ctx
// returns ctx.Err() at once; the append goes on in the background and
// still belongs to the transaction.
func (p *Producer) AppendStream(ctx context.Context, topic, key string, expectedVersion uint64, ev Event) (Appended, error) {
	if err := ctx.Err(); err != nil {
		return Appended{}, err
	}
	b, err := builder(ev)
	if err != nil {
		return Appended{}, err
	}
	args, free, err := cTexts("topic", topic, "key", key)
	if err != nil {
		C.cursus_event_builder_destroy(b)
		return Appended{}, err
	}
	return detached(ctx, func() (Appended, error) {
		defer free()
		defer C.cursus_event_builder_destroy(b)
		defer runtime.KeepAlive(p)
		var a *C.cursus_appended_t
		var e *C.cursus_error_t
		st := C.cursus_producer_append_stream(p.h, args[0], args[1], C.uint64_t(expectedVersion), b, &a, &e)
		return appendedFrom(a), esError(check(st, e))
	}, nil)
}
