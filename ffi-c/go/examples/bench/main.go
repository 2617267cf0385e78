// Command bench measures the Go binding next to the engine (make bench-ffi):
//
//	bench BROKER_ADDR N ENGINE.json OUT.json
//
// ENGINE.json is what `bench_send engine` (ffi-c/examples/bench_send.rs)
// wrote just before against the same broker; OUT.json gets this program's
// figures and the ratios to it. The workload is the engine's: N records of
// 100 B to 4 partitions (the partitioner choosing), acks=1, batch_size
// 256 KiB; per record (SendAsync, no callback), in batches of 1000
// (SendBatchAsync, one callback each), consumed with PollBatch.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	cursus "example.invalid/cursus-sdk/go"
)

const (
	payloadSize = 100
	batchSize   = 1000
)

func rssKiB() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: bench BROKER_ADDR N ENGINE.json OUT.json")
		os.Exit(2)
	}
	broker := os.Args[1]
	n, err := strconv.Atoi(os.Args[2])
	must(err)
	var engine map[string]any
	raw, err := os.ReadFile(os.Args[3])
	must(err)
	must(json.Unmarshal(raw, &engine))
	ctx := context.Background()
	pid := os.Getpid()
	tRecord, tBatch := fmt.Sprintf("bench-go-record-%d", pid), fmt.Sprintf("bench-go-batch-%d", pid)

	rssStart := rssKiB()
	admin, err := cursus.NewAdmin(ctx, cursus.WithBootstrap(broker))
	must(err)
	for _, t := range []string{tRecord, tBatch} {
		_, err := admin.CreateTopic(ctx, t, 4)
		must(err)
	}
	must(admin.Close())
	p, err := cursus.NewProducer(ctx, cursus.WithBootstrap(broker), cursus.WithOption("acks", "1"),
		cursus.WithOption("batch_size", "262144"))
	must(err)
	c, err := cursus.NewConsumer(ctx, cursus.WithBootstrap(broker), cursus.WithGroup(fmt.Sprintf("bench-go-%d", pid)),
		cursus.WithOption("max_poll_records", "10000"), cursus.WithOption("fetch_max_records", "8192"))
	must(err)
	must(c.Subscribe(ctx, tBatch))
	rssIdle := rssKiB()

	value := make([]byte, payloadSize)
	start := time.Now()
	for i := 0; i < n; i++ {
		must(p.SendAsync(ctx, cursus.Record{Topic: tRecord, Partition: cursus.AnyPartition, Value: value}, nil))
	}
	callUs := float64(time.Since(start).Microseconds()) / float64(n)
	must(p.Flush(cursus.NoTimeout(ctx)))
	perRecord := float64(n) / time.Since(start).Seconds()

	batch := make([]cursus.Record, batchSize)
	for i := range batch {
		batch[i] = cursus.Record{Topic: tBatch, Partition: cursus.AnyPartition, Value: value}
	}
	start = time.Now()
	for sent := 0; sent < n; {
		count := min(batchSize, n-sent)
		must(p.SendBatchAsync(ctx, batch[:count], nil))
		sent += count
	}
	must(p.Flush(cursus.NoTimeout(ctx)))
	batched := float64(n) / time.Since(start).Seconds()

	start = time.Now()
	for seen := 0; seen < n; {
		msgs, err := c.PollBatch(ctx, 10000)
		must(err)
		seen += len(msgs)
	}
	consume := float64(n) / time.Since(start).Seconds()
	must(c.Close())
	must(p.Close(ctx))

	ep, _ := engine["engine_produce_records_per_s"].(float64)
	ec, _ := engine["engine_consume_records_per_s"].(float64)
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return float64(int(a/b*1000+0.5)) / 1000
	}
	out := map[string]any{
		"binding": "go", "command": strings.Join(os.Args, " "), "records": n, "payload_bytes": payloadSize,
		"partitions": 4, "batch_records": batchSize,
		"engine_produce_records_per_s": ep, "engine_consume_records_per_s": ec,
		"produce_batch_records_per_s": int(batched), "produce_per_record_records_per_s": int(perRecord),
		"send_call_us": float64(int(callUs*1000)) / 1000, "consume_records_per_s": int(consume),
		"rss_before_clients_kib": rssStart, "idle_client_rss_kib": rssIdle,
		"ratio_produce_batch": ratio(batched, ep), "ratio_produce_per_record": ratio(perRecord, ep),
		"ratio_consume": ratio(consume, ec),
	}
	js, err := json.MarshalIndent(out, "", "  ")
	must(err)
	must(os.WriteFile(os.Args[4], append(js, '\n'), 0o644))
	fmt.Printf("Go: batch %.0f records/s (%.2f of the engine), per record %.0f records/s (%.2f), %.2f us per send call;"+
		" consume %.0f records/s (%.2f); idle producer+consumer RSS %d KiB (%d before)\n",
		batched, ratio(batched, ep), perRecord, ratio(perRecord, ep), callUs, consume, ratio(consume, ec), rssIdle, rssStart)
}
