// Command bench-peer-go is the Go rows of `make bench-peer`
// (tools/bench-peer/README.md): our Go package (ffi-c/go, cgo over
// libcursus) against franz-go, the same workload through each.
//
//	bench-peer-go cursus|franz produce|consume BOOTSTRAP TOPIC N
//
// The topic exists already (run.py creates it, 4 partitions). produce: a
// cold producer queues N records of 100 B, partitions round-robin, acks=1,
// linger 5 ms, batches of up to 256 KiB, each with a callback that counts
// failures, then flushes; records/s from the first call to the end of the
// flush. Each client keeps its default buffer (neither fails a call when it
// is full: both block). consume: one group member polls up to 10,000
// records a call; records/s from the first record to the last (the group
// join left out). Prints one JSON object.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	cursus "example.invalid/cursus-sdk/go"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	payloadSize  = 100
	partitions   = 4
	maxPoll      = 10_000
	pollTimeout  = time.Second
	consumeLimit = 300 * time.Second
	franzVersion = "franz-go v1.22.3"
)

// counter counts the records that arrived after the first poll that
// returned any (that poll starts the clock and is left out, as in the
// other rows), and when the last did.
type counter struct {
	started     bool
	timed       int
	first, last time.Time
}

func (c *counter) add(n int) {
	if n == 0 {
		return
	}
	if !c.started {
		c.started, c.first = true, time.Now()
	} else {
		c.timed += n
	}
	c.last = time.Now()
}

// rate is records/s from the first record to the last.
func (c *counter) rate() float64 {
	if s := c.last.Sub(c.first).Seconds(); s > 0 {
		return float64(c.timed) / s
	}
	return 0
}

// consume polls with pollOnce until n records arrived (error after
// consumeLimit) and returns records/s from the first to the last.
func consume(n int, pollOnce func(ctx context.Context, left int) (int, error)) (float64, error) {
	var c counter
	seen := 0
	deadline := time.Now().Add(consumeLimit)
	for seen < n && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
		got, err := pollOnce(ctx, min(maxPoll, n-seen))
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return 0, err
		}
		c.add(got)
		seen += got
	}
	if seen < n {
		return 0, fmt.Errorf("consumed %d of %d", seen, n)
	}
	return c.rate(), nil
}

func cursusProduce(bootstrap, topic string, n int) (float64, error) {
	ctx := context.Background()
	p, err := cursus.NewProducer(ctx, cursus.WithBootstrap(bootstrap), cursus.WithOption("acks", "1"),
		cursus.WithOption("linger_ms", "5"), cursus.WithOption("batch_size", "262144"))
	if err != nil {
		return 0, err
	}
	var failed atomic.Int64
	count := func(_ cursus.RecordMetadata, err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	value := make([]byte, payloadSize)
	start := time.Now()
	for i := 0; i < n; i++ {
		r := cursus.Record{Topic: topic, Partition: int32(i % partitions), Value: value}
		if err := p.SendAsync(ctx, r, count); err != nil {
			return 0, err
		}
	}
	if err := p.Flush(cursus.NoTimeout(ctx)); err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	if err := p.Close(ctx); err != nil {
		return 0, err
	}
	if f := failed.Load(); f > 0 {
		return 0, fmt.Errorf("%d records failed", f)
	}
	return rate, nil
}

func cursusConsume(bootstrap, topic string, n int) (float64, error) {
	ctx := context.Background()
	c, err := cursus.NewConsumer(ctx, cursus.WithBootstrap(bootstrap), cursus.WithGroup("g-"+topic),
		cursus.WithOption("auto_offset_reset", "earliest"),
		cursus.WithOption("max_poll_records", strconv.Itoa(maxPoll)), cursus.WithOption("fetch_max_records", "8192"))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if err := c.Subscribe(ctx, topic); err != nil {
		return 0, err
	}
	return consume(n, func(ctx context.Context, left int) (int, error) {
		msgs, err := c.PollBatch(ctx, left)
		return len(msgs), err
	})
}

func franzProduce(bootstrap, topic string, n int) (float64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(262144), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx := context.Background()
	var failed atomic.Int64
	count := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.Add(1)
		}
	}
	value := make([]byte, payloadSize)
	start := time.Now()
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: value}, count)
	}
	if err := cl.Flush(ctx); err != nil {
		return 0, err
	}
	rate := float64(n) / time.Since(start).Seconds()
	if f := failed.Load(); f > 0 {
		return 0, fmt.Errorf("%d records failed", f)
	}
	return rate, nil
}

func franzConsume(bootstrap, topic string, n int) (float64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumerGroup("g-"+topic), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return consume(n, func(ctx context.Context, left int) (int, error) {
		fetches := cl.PollRecords(ctx, left)
		var err error
		fetches.EachError(func(_ string, _ int32, e error) {
			if err == nil {
				err = e
			}
		})
		return fetches.NumRecords(), err
	})
}

func main() {
	usage := "usage: bench-peer-go cursus|franz produce|consume BOOTSTRAP TOPIC N"
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	client, mode, bootstrap, topic := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	n, err := strconv.Atoi(os.Args[5])
	if err != nil || n <= 0 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	runs := map[string]func(string, string, int) (float64, error){
		"cursus produce": cursusProduce, "cursus consume": cursusConsume,
		"franz produce": franzProduce, "franz consume": franzConsume,
	}
	run, ok := runs[client+" "+mode]
	if !ok {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	rate, err := run(bootstrap, topic, n)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-peer-go %s %s: %v\n", client, mode, err)
		os.Exit(1)
	}
	version := franzVersion
	if client == "cursus" {
		version = cursus.LibraryVersion()
	}
	fmt.Printf("{\"client\": %q, \"version\": %q, \"mode\": %q, \"records\": %d, \"records_per_s\": %.0f}\n",
		client, version, mode, n, rate)
}
