package cursus

import (
	"errors"
	"fmt"
	"sort"
	"testing"
)

// TestSendsWithoutCallbackAndAcrossTopics checks the paths that skip work:
// a nil callback (no callback crosses back; Flush still waits for the
// records) and the producer's reused topic argument when the topic
// changes from one send to the next (each record lands on its own topic,
// each report names it).
func TestSendsWithoutCallbackAndAcrossTopics(t *testing.T) {
	ctx := ctxT(t)
	a, b := unique("go-send-paths-a"), unique("go-send-paths-b")
	createTopic(t, a, 1)
	createTopic(t, b, 1)
	p := newProducer(t)
	reports := make(chan RecordMetadata, 8)
	want := map[string][]string{}
	for i := 0; i < 6; i++ {
		topic := []string{a, b}[i%2]
		value := fmt.Sprintf("one-%d", i)
		want[topic] = append(want[topic], value)
		var fn func(RecordMetadata, error)
		if i >= 4 {
			fn = func(md RecordMetadata, err error) {
				if err != nil {
					t.Errorf("%s: %v", value, err)
				}
				reports <- md
			}
		}
		if err := p.SendAsync(ctx, Record{Topic: topic, Value: []byte(value)}, fn); err != nil {
			t.Fatal(err)
		}
	}
	for i, topic := range []string{b, a, b} {
		batch := []Record{{Topic: topic, Value: []byte(fmt.Sprintf("batch-%d-0", i))},
			{Topic: topic, Value: []byte(fmt.Sprintf("batch-%d-1", i))}}
		want[topic] = append(want[topic], string(batch[0].Value), string(batch[1].Value))
		if err := p.SendBatchAsync(ctx, batch, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The two sends with a callback, one to a, one to b (their callbacks
	// keep offset order per partition only), each report naming its topic.
	named := map[string]bool{}
	for range 2 {
		md := within(t, reports, "a delivery callback")
		if md.Offset < 0 {
			t.Fatalf("report %+v", md)
		}
		named[md.Topic] = true
	}
	if !named[a] || !named[b] {
		t.Fatalf("reports named %v, want %s and %s", named, a, b)
	}

	c := newConsumer(t, unique("go-send-paths-group"), WithOption("auto_offset_reset", "earliest"))
	if err := c.Subscribe(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for n := 0; n < 12; {
		msgs, err := c.PollBatch(ctx, 12-n)
		if err != nil {
			t.Fatalf("after %d of 12 messages: %v", n, err)
		}
		for _, m := range msgs {
			got[m.Topic] = append(got[m.Topic], string(m.Value))
		}
		n += len(msgs)
	}
	for topic, values := range want {
		sort.Strings(values)
		sort.Strings(got[topic])
		if fmt.Sprint(values) != fmt.Sprint(got[topic]) {
			t.Fatalf("%s: got %v, want %v", topic, got[topic], values)
		}
	}
	assertNothingMore(t, c)

	// A send that cannot be queued returns its error (the library's, read
	// from the returned result), with or without a callback, which is
	// never called.
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []func(RecordMetadata, error){nil, func(RecordMetadata, error) { t.Error("called back") }} {
		if err := p.SendAsync(ctx, Record{Topic: a, Value: []byte("late")}, fn); !errors.Is(err, ErrClosed) {
			t.Fatalf("closed: %v", err)
		}
		if err := p.SendBatchAsync(ctx, []Record{{Topic: b, Value: []byte("late")}}, nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("closed, a batch: %v", err)
		}
	}
}
