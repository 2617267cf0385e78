package cursus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestSendBatchDeliversEveryRecordInOrder(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-send-batch")
	createTopic(t, topic, 1)
	p := newProducer(t)
	ts := time.UnixMilli(1_700_000_000_000)
	records := make([]Record, 6)
	for i := range records {
		records[i] = Record{Topic: topic, Partition: 0, Key: []byte("k"), Value: []byte("v"), Timestamp: ts}
	}
	records[2].Partition = 9 // does not exist: this record alone fails
	records[3].Key = nil
	mds, err := p.SendBatch(ctx, records)
	var be *BatchError
	if !errors.As(err, &be) || be.Failed != 1 || len(be.Errors) != 6 || be.Errors[2] == nil {
		t.Fatalf("want one failed record in a BatchError, got %v", err)
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("the failed record's error is reachable: %v", err)
	}
	want := int64(0)
	for i, md := range mds {
		if i == 2 {
			if md.Offset != -1 || md.Partition != -1 {
				t.Fatalf("failed record has metadata %+v", md)
			}
			continue
		}
		if be.Errors[i] != nil || md.Topic != topic || md.Partition != 0 || md.Offset != want || !md.Timestamp.Equal(ts) {
			t.Fatalf("record %d: %+v (%v), want offset %d", i, md, be.Errors[i], want)
		}
		want++
	}

	// All delivered: no error; one callback per batch.
	var calls atomic.Int32
	done := make(chan []RecordMetadata, 1)
	err = p.SendBatchAsync(ctx, []Record{{Topic: topic, Value: []byte("a")}, {Topic: topic, Value: []byte("b")}},
		func(mds []RecordMetadata, errs []error) {
			calls.Add(1)
			if errs != nil {
				t.Errorf("unexpected errors %v", errs)
			}
			done <- mds
		})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := within(t, done, "the batch callback")
	if calls.Load() != 1 || len(got) != 2 || got[0].Offset != 5 || got[1].Offset != 6 {
		t.Fatalf("calls %d, metadata %+v", calls.Load(), got)
	}

	// One topic per batch (the library's rule and error); a closed producer
	// refuses the batch.
	_, err = p.SendBatch(ctx, []Record{{Topic: topic}, {Topic: "other"}})
	var ce *Error
	wantMsg := fmt.Sprintf(`a batch has one topic: record 1 is for "other", the batch for "%s"`, topic)
	if !errors.As(err, &ce) || ce.Code != "invalid_argument" || ce.Class != "validation" || ce.Message != wantMsg {
		t.Fatalf("mixed topics: %#v", err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.SendBatchAsync(ctx, records, func([]RecordMetadata, []error) { t.Error("called back") }); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}
