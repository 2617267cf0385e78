// Command quickstart creates a topic, produces 1,000 records, consumes them
// through a consumer group and commits, in Go.
//
//	usage: quickstart [BROKER_ADDR]   (default 127.0.0.1:9000)
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	cursus "example.invalid/cursus-sdk/go"
)

const (
	topic   = "quickstart-go"
	group   = "quickstart-go"
	records = 1000
)

func main() {
	broker := "127.0.0.1:9000"
	if len(os.Args) > 1 {
		broker = os.Args[1]
	}
	started := time.Now()
	if err := run(broker); err != nil {
		// err.Error() is the readable text, the same in every Cursus
		// language; errors.As(err, &ce) gives Code, Class and Fields.
		fmt.Fprintf(os.Stderr, "go quickstart failed: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("go: produced %d, consumed %d through group %s, committed (%d ms)\n",
		records, records, group, time.Since(started).Milliseconds())
}

func run(broker string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The topic, with 3 partitions. Creating a topic that already exists with
	// the same settings succeeds, so the quickstart can run again.
	admin, err := cursus.NewAdmin(ctx, cursus.WithBootstrap(broker))
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.CreateTopic(ctx, topic, 3); err != nil {
		return err
	}

	// Produce: queue every record, flush (it returns once every delivery
	// callback ran), then check that none failed.
	producer, err := cursus.NewProducer(ctx, cursus.WithBootstrap(broker))
	if err != nil {
		return err
	}
	defer producer.Close(ctx)
	failed := make(chan error, records)
	for i := 0; i < records; i++ {
		r := cursus.Record{
			Topic:     topic,
			Partition: cursus.AnyPartition,
			Key:       []byte(fmt.Sprintf("key-%d", i)),
			Value:     []byte(fmt.Sprintf("go record %d", i)),
		}
		if err := producer.SendAsync(ctx, r, func(_ cursus.RecordMetadata, err error) {
			if err != nil {
				failed <- err
			}
		}); err != nil {
			return err
		}
	}
	if err := producer.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-failed:
		return err
	default:
	}

	// Consume through the group until all records arrived (at most 60 s).
	consumer, err := cursus.NewConsumer(ctx, cursus.WithBootstrap(broker), cursus.WithGroup(group),
		cursus.WithOption("auto_offset_reset", "earliest"))
	if err != nil {
		return err
	}
	defer consumer.Close()
	if err := consumer.Subscribe(ctx, topic); err != nil {
		return err
	}
	pollCtx, stop := context.WithTimeout(ctx, 60*time.Second)
	defer stop()
	// PollBatch returns several records per call (at most max_poll_records);
	// asking for no more than are still wanted takes exactly `records`.
	for consumed := 0; consumed < records; {
		batch, err := consumer.PollBatch(pollCtx, records-consumed)
		if err != nil {
			if pollCtx.Err() != nil {
				return fmt.Errorf("consumed only %d of %d records in 60 s", consumed, records)
			}
			return err
		}
		consumed += len(batch)
	}
	if err := consumer.Commit(ctx); err != nil {
		return err
	}
	if err := consumer.Close(); err != nil {
		return err
	}
	return producer.Close(ctx)
}
