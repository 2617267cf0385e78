// Benchmarks (go test -bench . with a broker: make bench-ffi).

package cursus

import (
	"context"
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
