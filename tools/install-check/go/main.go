// A first Cursus program, as a user writes it from the README: create a
// topic, send one record, read it back through a consumer group.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	cursus "example.invalid/cursus-sdk/go"
)

func main() {
	bootstrap := os.Getenv("CURSUS_TEST_BROKER")
	if bootstrap == "" {
		bootstrap = "127.0.0.1:9000"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	admin, err := cursus.NewAdmin(ctx, cursus.WithBootstrap(bootstrap))
	if err != nil {
		log.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.CreateTopic(ctx, "first-go", 1); err != nil {
		log.Fatal(err)
	}

	producer, err := cursus.NewProducer(ctx, cursus.WithBootstrap(bootstrap))
	if err != nil {
		log.Fatal(err)
	}
	stored, err := producer.Send(ctx, cursus.Record{Topic: "first-go", Key: []byte("k"), Value: []byte("hello")})
	if err != nil {
		log.Fatal(err)
	}
	if err := producer.Close(ctx); err != nil {
		log.Fatal(err)
	}

	consumer, err := cursus.NewConsumer(ctx, cursus.WithBootstrap(bootstrap), cursus.WithGroup("first-go"))
	if err != nil {
		log.Fatal(err)
	}
	defer consumer.Close()
	if err := consumer.Subscribe(ctx, "first-go"); err != nil {
		log.Fatal(err)
	}
	msg, err := consumer.Poll(ctx)
	if err != nil || msg == nil {
		log.Fatalf("no record came back: %v", err)
	}
	if err := consumer.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	if string(msg.Value) != "hello" {
		log.Fatalf("read back %q", msg.Value)
	}
	fmt.Printf("go: sent to partition %d offset %d, read back %q\n", stored.Partition, stored.Offset, msg.Value)
}
