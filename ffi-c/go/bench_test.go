// Benchmarks (go test -bench . with a broker: make bench-ffi).

package cursus

import (
	"context"
	"encoding/binary"
	"testing"
)

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

// packedView packs n records of topic, one partition, no key and a value of
// size bytes the way bridge/src/records.rs does (the packed record view).
func packedView(topic string, n, size int) []byte {
	le := binary.LittleEndian
	out := le.AppendUint32(nil, uint32(n))
	value := make([]byte, size)
	for i := 0; i < n; i++ {
		out = le.AppendUint32(out, uint32(len(topic)))
		out = append(out, topic...)
		out = le.AppendUint32(out, uint32(i%4))
		out = le.AppendUint64(out, uint64(i))
		out = le.AppendUint64(out, 1_700_000_000_000)
		out = le.AppendUint32(out, 0xffffffff) // no key
		out = le.AppendUint32(out, uint32(size))
		out = append(out, value...)
		out = le.AppendUint32(out, 0xffffffff) // no metadata
		out = le.AppendUint32(out, 0xffffffff) // not an event
	}
	return out
}

// BenchmarkDecodeRecords measures the Go side of PollBatch alone: turning
// one poll's packed view (10,000 records of 100 B, as make bench-ffi
// consumes them) into Messages. ns/op / 10,000 is the cost per record.
func BenchmarkDecodeRecords(b *testing.B) {
	view := packedView("bench-go-batch-12345", 10_000, 100)
	b.SetBytes(int64(len(view)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if got := decodeRecords(view); len(got) != 10_000 {
			b.Fatal(len(got))
		}
	}
}

// BenchmarkPackBatch measures packing one batch of 1,000 records of 100 B
// (the Go side of SendBatchAsync before its one cgo call).
func BenchmarkPackBatch(b *testing.B) {
	value := make([]byte, 100)
	records := make([]Record, 1000)
	for i := range records {
		records[i] = Record{Topic: "bench-go-batch-12345", Partition: AnyPartition, Value: value}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		releasePacked(packBatch(records[0].Topic, records, false))
	}
}
