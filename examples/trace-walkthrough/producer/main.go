// Command producer is the Go half of the trace walk-through
// (docs/observability.md, "See one trace from a Go producer to a Python
// consumer"): it creates a topic and sends one record through
// cursusotel.Producer, so the record carries its publish span's context,
// and writes its spans as JSON, one per line, to SPANS_FILE with
// OpenTelemetry's stdout exporter.
//
//	usage: producer BROKER_ADDR TOPIC SPANS_FILE
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	cursus "example.invalid/cursus-sdk/go"
	cursusotel "example.invalid/cursus-sdk/go/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: producer BROKER_ADDR TOPIC SPANS_FILE")
	}
	broker, topic, spansFile := os.Args[1], os.Args[2], os.Args[3]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	out, err := os.Create(spansFile)
	check(err)
	defer out.Close()
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(out))
	check(err)
	// A syncer: each span is written when it ends.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "walkthrough-go-producer"))))
	defer func() { check(tp.Shutdown(context.Background())) }()

	admin, err := cursus.NewAdmin(ctx, cursus.WithBootstrap(broker))
	check(err)
	_, err = admin.CreateTopic(ctx, topic, 1)
	check(err)
	check(admin.Close())

	raw, err := cursus.NewProducer(ctx, cursus.WithBootstrap(broker), cursus.WithOption("client_id", "go-producer"))
	check(err)
	defer raw.Close(context.Background())
	producer := cursusotel.NewProducer(raw, cursusotel.WithTracerProvider(tp), cursusotel.WithClientID("go-producer"))
	md, err := producer.Send(ctx, cursus.Record{Topic: topic, Partition: cursus.AnyPartition,
		Key: []byte("order-7"), Value: []byte(`{"total": 42}`)})
	check(err)
	fmt.Printf("go producer: sent %s/%d@%d\n", md.Topic, md.Partition, md.Offset)
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
