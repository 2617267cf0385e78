// Command produce_consume produces three records and consumes them through
// a consumer group, in Go.
//
//	usage: produce_consume [BROKER_ADDR]   (default 127.0.0.1:9000)
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	cursus "example.invalid/cursus-sdk/go"
)

func main() {
	broker := "127.0.0.1:9000"
	if len(os.Args) > 1 {
		broker = os.Args[1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := fmt.Sprintf("example-go-%d", time.Now().Unix())
	fmt.Printf("libcursus %s, broker %s\n", cursus.Version, broker)

	admin, err := cursus.NewAdmin(ctx, cursus.WithBootstrap(broker))
	check(err)
	info, err := admin.CreateTopic(ctx, topic, 1)
	check(err)
	fmt.Printf("created %s with %d partition(s), revision %d\n", info.Name, info.Partitions, info.Revision)
	check(admin.Close())

	producer, err := cursus.NewProducer(ctx, cursus.WithBootstrap(broker), cursus.WithOption("acks", "all"))
	check(err)
	for i := 0; i < 3; i++ {
		value := fmt.Sprintf("hello %d", i)
		m, err := producer.Send(ctx, cursus.Record{Topic: topic, Partition: cursus.AnyPartition, Value: []byte(value)})
		check(err)
		fmt.Printf("produced %s to %s/%d@%d\n", value, m.Topic, m.Partition, m.Offset)
	}
	check(producer.Close(ctx))

	consumer, err := cursus.NewConsumer(ctx, cursus.WithBootstrap(broker), cursus.WithGroup("example-go"))
	check(err)
	defer consumer.Close()
	check(consumer.Subscribe(ctx, topic))
	for got := 0; got < 3; got++ {
		m, err := consumer.Poll(ctx)
		check(err)
		fmt.Printf("consumed %s from %s/%d@%d\n", m.Value, m.Topic, m.Partition, m.Offset)
	}
	check(consumer.Commit(ctx))
	fmt.Println("done")
}

func check(err error) {
	if err == nil {
		return
	}
	var ce *cursus.Error
	if errors.As(err, &ce) && !ce.Retryable {
		// The readable text is the same in every Cursus language; Code,
		// Class and Fields are there to branch on.
		log.Fatalf("error (%s): %v", ce.Class, err)
	}
	log.Fatal(err)
}
