package cursus

// #include <stdlib.h>
// #include "cursus.h"
// int cursus_go_in_callback(void);
// cursus_status_t cursus_go_txn(cursus_producer_t *p, int step, uintptr_t handle, cursus_error_t **err);
// cursus_status_t cursus_go_txn_send_offsets(cursus_producer_t *p, cursus_consumer_t *c, uintptr_t handle,
//                                            cursus_error_t **err);
import "C"

import (
	"context"
	"runtime"
	"runtime/cgo"
)

// IsolationLevel is what a consumer reads of transactional records (option
// isolation_level).
type IsolationLevel string

const (
	// ReadCommitted (the default) returns only records of committed
	// transactions (and non-transactional ones), up to the last stable
	// offset: a poll waits while a transaction before it is open.
	ReadCommitted IsolationLevel = "read_committed"
	// ReadUncommitted returns every record as it is stored, those of open
	// and aborted transactions included.
	ReadUncommitted IsolationLevel = "read_uncommitted"
)

// WithTransactionalID makes a producer transactional (option
// transactional_id; requires acks=all, the default). Producers with the
// same id fence each other: the one that called InitTransactions last wins.
func WithTransactionalID(id string) Option { return WithOption("transactional_id", id) }

// WithIsolationLevel sets what a consumer reads of transactional records
// (option isolation_level).
func WithIsolationLevel(level IsolationLevel) Option {
	return WithOption("isolation_level", string(level))
}

// Transaction steps of cursus_go_txn (callbacks.c).
const (
	txnInit = iota
	txnBegin
	txnCommit
	txnAbort
)

// InitTransactions obtains the producer's transactional session from the
// broker, fencing any older producer with the same transactional id and
// aborting a transaction it left open. Call it once, before the first
// BeginTransaction.
func (p *Producer) InitTransactions(ctx context.Context) error {
	return p.txnStep(ctx, txnInit, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_producer_init_transactions(p.h, e)
	})
}

// BeginTransaction begins a transaction: the records sent until
// CommitTransaction or AbortTransaction belong to it.
func (p *Producer) BeginTransaction(ctx context.Context) error {
	return p.txnStep(ctx, txnBegin, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_producer_begin_transaction(p.h, e)
	})
}

// CommitTransaction waits for every send of the open transaction, then
// commits it: its records and offsets become visible together. A lost
// reply is retried until the broker decides (up to delivery_timeout_ms); if
// still undecided, the error is returned and the commit may be called
// again. After a failed send it fails: abort.
func (p *Producer) CommitTransaction(ctx context.Context) error {
	return p.txnStep(ctx, txnCommit, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_producer_commit_transaction(p.h, e)
	})
}

// AbortTransaction waits for the open transaction's sends to finish, then
// aborts it: none of its records or offsets become visible to ReadCommitted
// consumers.
func (p *Producer) AbortTransaction(ctx context.Context) error {
	return p.txnStep(ctx, txnAbort, func(e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.cursus_producer_abort_transaction(p.h, e)
	})
}

// SendOffsetsToTransaction adds what consumer has delivered so far (for
// each partition, the offset after the last message Poll returned) to the
// open transaction, fenced by the consumer's group session: the group's
// committed offsets move with the commit, or not at all. The consumer must
// have joined its group (polled once).
func (p *Producer) SendOffsetsToTransaction(ctx context.Context, consumer *Consumer) error {
	defer runtime.KeepAlive(consumer)
	return p.txnCall(ctx,
		func(h C.uintptr_t, e **C.cursus_error_t) C.enum_cursus_status_t {
			return C.enum_cursus_status_t(C.cursus_go_txn_send_offsets(p.h, consumer.h, h, e))
		},
		func(e **C.cursus_error_t) C.enum_cursus_status_t {
			// On a goroutine ctx may abandon: keep consumer alive there.
			defer runtime.KeepAlive(consumer)
			return C.cursus_producer_send_consumer_offsets(p.h, consumer.h, e)
		})
}

// SendExplicitOffsetsToTransaction adds explicit next offsets (the offset
// after the last record processed) to the open transaction, fenced by
// consumer's group session. Cancelling ctx returns ctx.Err() at once; the
// call goes on in the background.
func (p *Producer) SendExplicitOffsetsToTransaction(ctx context.Context, offsets map[TopicPartition]int64,
	consumer *Consumer) error {
	sorted := sortedOffsets(offsets)
	_, err := interruptible(ctx, func() (struct{}, error) {
		defer runtime.KeepAlive(p)
		defer runtime.KeepAlive(consumer)
		var e *C.cursus_error_t
		list, s := offsetList(sorted, &e)
		if Status(s) != StatusOK {
			return struct{}{}, check(s, e)
		}
		defer C.cursus_topic_partition_list_destroy(list)
		return struct{}{}, check(C.cursus_producer_send_offsets_to_transaction(p.h, list, consumer.h, &e), e)
	})
	return err
}

// txnStep runs one of the producer's transaction calls: the _async form
// (`step` of cursus_go_txn), or `blocking` inside a callback.
func (p *Producer) txnStep(ctx context.Context, step int,
	blocking func(**C.cursus_error_t) C.enum_cursus_status_t) error {
	return p.txnCall(ctx, func(h C.uintptr_t, e **C.cursus_error_t) C.enum_cursus_status_t {
		return C.enum_cursus_status_t(C.cursus_go_txn(p.h, C.int(step), h, e))
	}, blocking)
}

// txnCall starts a transaction call with its _async form (`start`, given
// the completion's cgo.Handle) and waits for its outcome or for ctx, so no
// thread stays blocked in the library. Inside a callback the outcome could
// not be delivered (it runs on a client's callback thread, perhaps this
// very one): there the blocking form runs on a goroutine of its own.
func (p *Producer) txnCall(ctx context.Context,
	start func(C.uintptr_t, **C.cursus_error_t) C.enum_cursus_status_t,
	blocking func(**C.cursus_error_t) C.enum_cursus_status_t) error {
	defer runtime.KeepAlive(p)
	if err := ctx.Err(); err != nil {
		return err
	}
	if C.cursus_go_in_callback() != 0 {
		_, err := interruptible(ctx, func() (struct{}, error) {
			defer runtime.KeepAlive(p)
			var e *C.cursus_error_t
			return struct{}{}, check(blocking(&e), e)
		})
		return err
	}
	done := make(chan error, 1) // never blocks the callback thread
	h := cgo.NewHandle(func(err error) { done <- err })
	var e *C.cursus_error_t
	if err := check(start(C.uintptr_t(h), &e), e); err != nil {
		h.Delete() // not started: the completion will never run
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
