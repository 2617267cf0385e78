// Consumer control (seek, position, pause/resume, committed offsets), the
// rebalance listener, every record field, logging and statistics.

package cursus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRecordFieldsAndTimestamps(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-fields")
	createTopic(t, topic, 1)
	p := newProducer(t)
	stamp := time.UnixMilli(1234567)
	md, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Key: []byte("k"), Value: []byte("stamped"), Timestamp: stamp})
	if err != nil {
		t.Fatal(err)
	}
	if !md.Timestamp.Equal(stamp) {
		t.Fatalf("delivery timestamp %v, want %v", md.Timestamp, stamp)
	}
	if _, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte("nokey")}); err != nil {
		t.Fatal(err)
	}
	// One message at a time (accessors) and as a batch (packed view).
	for _, batch := range []bool{false, true} {
		c := newConsumer(t, unique("go-fields-group"), WithOption("auto_offset_reset", "earliest"))
		must(t, c.Subscribe(ctx, topic))
		var got []Message
		if batch {
			got = pollBatchN(t, c, 2)
		} else {
			for len(got) < 2 {
				m, err := c.Poll(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, *m)
			}
		}
		first, second := got[0], got[1]
		if !first.Timestamp.Equal(stamp) || string(first.Key) != "k" || string(first.Value) != "stamped" ||
			first.Metadata != nil || first.Event != nil {
			t.Fatalf("batch=%v: first %+v", batch, first)
		}
		if second.Key != nil || string(second.Value) != "nokey" || second.Timestamp.UnixMilli() <= 0 {
			t.Fatalf("batch=%v: second %+v", batch, second)
		}
	}

	// An event's fields reach a plain consumer.
	es := esTopic(t, "go-fields-es", 1)
	s := newEventStore(t)
	mustAppend(t, s, es, "agg", 0, Event{Type: "Created", Payload: "p", Metadata: `{"by":"a"}`, SchemaVersion: 2, ID: "ev-1"})
	for _, batch := range []bool{false, true} {
		c := newConsumer(t, unique("go-fields-es-group"), WithOption("auto_offset_reset", "earliest"))
		must(t, c.Subscribe(ctx, es))
		var m Message
		if batch {
			m = pollBatchN(t, c, 1)[0]
		} else {
			got, err := c.Poll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			m = *got
		}
		if m.Metadata == nil || *m.Metadata != `{"by":"a"}` || m.Event == nil || m.Event.Type != "Created" ||
			m.Event.SchemaVersion != 2 || m.Event.AggregateVersion != 1 || m.Event.ID != "ev-1" || string(m.Key) != "agg" {
			t.Fatalf("batch=%v: event record %+v (event %+v)", batch, m, m.Event)
		}
	}
}

// pollBatchN polls batches until n messages arrived.
func pollBatchN(t testing.TB, c *Consumer, n int) []Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var out []Message
	for len(out) < n {
		b, err := c.PollBatch(ctx, n-len(out))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

func TestSeekPositionAndCommittedOffsets(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-seek"), unique("go-seek-group")
	createTopic(t, topic, 2)
	produceValues(t, topic, 10)
	c := newConsumer(t, group, WithOption("auto_offset_reset", "earliest"), WithOption("enable_auto_commit", "false"))
	tp := TopicPartition{Topic: topic, Partition: 0}
	// Not assigned before the group was joined.
	if err := c.Seek(ctx, tp, 0); err == nil {
		t.Fatal("seek before joining: no error")
	}
	if err := c.Seek(ctx, tp, -1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative offset: %v", err)
	}
	must(t, c.Subscribe(ctx, topic))
	if got := take(t, c, 5); !slices.Equal(got, []int64{0, 1, 2, 3, 4}) {
		t.Fatalf("offsets %v", got)
	}
	if pos, err := c.Position(ctx, tp); err != nil || pos != 5 {
		t.Fatalf("position %d, %v", pos, err)
	}
	must(t, c.Seek(ctx, tp, 2))
	if pos, err := c.Position(ctx, tp); err != nil || pos != 2 {
		t.Fatalf("position after seek %d, %v", pos, err)
	}
	if got := take(t, c, 3); !slices.Equal(got, []int64{2, 3, 4}) {
		t.Fatalf("offsets after seek %v", got)
	}
	must(t, c.CommitOffsets(ctx, map[TopicPartition]int64{tp: 4}))
	other := TopicPartition{Topic: topic, Partition: 1}
	committed, err := c.CommittedOffsets(ctx, []TopicPartition{tp, other})
	if err != nil {
		t.Fatal(err)
	}
	if off, ok := committed[tp]; !ok || off != 4 || len(committed) != 1 {
		t.Fatalf("committed %v", committed)
	}
	if _, ok := committed[other]; ok {
		t.Fatalf("partition 1 has no commit: %v", committed)
	}
}

func TestPauseAndResume(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-pause"), unique("go-pause-group")
	createTopic(t, topic, 1)
	c := newConsumer(t, group, WithOption("auto_offset_reset", "earliest"))
	must(t, c.Subscribe(ctx, topic))
	assigned := make(chan []TopicPartition, 4)
	must(t, c.SetRebalanceListener(&RebalanceListener{OnAssigned: func(p []TopicPartition) { assigned <- p }}))
	// Join (nothing to read yet): the assignment arrives during this Poll.
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	if _, err := c.Poll(pctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first poll: %v", err)
	}
	cancel()
	tp := TopicPartition{Topic: topic, Partition: 0}
	if got := within(t, assigned, "assignment"); !slices.Equal(got, []TopicPartition{tp}) {
		t.Fatalf("assigned %v", got)
	}
	must(t, c.Pause(ctx, tp))
	if paused, err := c.Paused(ctx); err != nil || !slices.Equal(paused, []TopicPartition{tp}) {
		t.Fatalf("paused %v, %v", paused, err)
	}
	produceValues(t, topic, 3)
	assertNothingMore(t, c)
	must(t, c.Resume(ctx, tp))
	if paused, err := c.Paused(ctx); err != nil || len(paused) != 0 {
		t.Fatalf("paused after resume %v, %v", paused, err)
	}
	if got := take(t, c, 3); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Fatalf("offsets after resume %v", got)
	}
}

func TestRebalanceListenerSeeksOnAssignedAndCommitsOnRevoked(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-rebalance"), unique("go-rebalance-group")
	createTopic(t, topic, 1)
	produceValues(t, topic, 6)
	c := newConsumer(t, group, WithOption("auto_offset_reset", "earliest"), WithOption("enable_auto_commit", "false"))
	var mu sync.Mutex
	var events []string
	var revokeErr, pollErr error
	record := func(kind string, p []TopicPartition) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, fmt.Sprintf("%s %v", kind, p))
	}
	must(t, c.SetRebalanceListener(&RebalanceListener{
		OnAssigned: func(p []TopicPartition) {
			record("assigned", p)
			for _, tp := range p {
				if err := c.Seek(context.Background(), tp, 3); err != nil {
					t.Errorf("seek in OnAssigned: %v", err)
				}
			}
			// Poll from the listener fails (it does not deadlock).
			_, err := c.Poll(context.Background())
			mu.Lock()
			pollErr = err
			mu.Unlock()
			panic("a listener's panic is contained")
		},
		OnRevoked: func(p []TopicPartition) {
			err := c.Commit(context.Background())
			mu.Lock()
			revokeErr = err
			mu.Unlock()
			record("revoked", p)
		},
	}))
	must(t, c.Subscribe(ctx, topic))
	if got := take(t, c, 3); !slices.Equal(got, []int64{3, 4, 5}) {
		t.Fatalf("offsets after the seek in OnAssigned %v", got)
	}
	mu.Lock()
	if pollErr == nil {
		t.Error("Poll inside the listener succeeded")
	}
	mu.Unlock()
	must(t, c.Close())
	mu.Lock()
	defer mu.Unlock()
	tp := fmt.Sprint([]TopicPartition{{topic, 0}})
	if !slices.Equal(events, []string{"assigned " + tp, "revoked " + tp}) {
		t.Fatalf("events %v", events)
	}
	if revokeErr != nil {
		t.Fatalf("commit in OnRevoked at close: %v", revokeErr)
	}
	// The commit in OnRevoked covered what was returned.
	c2 := newConsumer(t, group)
	off, ok, err := c2.Committed(ctx, topic, 0)
	if err != nil || !ok || off != 6 {
		t.Fatalf("committed after close: %d %v %v", off, ok, err)
	}
}

func TestReleasedListenerIsDropped(t *testing.T) {
	called := false
	id := registerListener(func(error) { called = true })
	releaseListener(id)
	// The library may still call a replaced listener's id: the lookup
	// finds nothing, so the call is dropped.
	if _, ok := lookupListener(id).(func(error)); ok || called {
		t.Fatal("a released listener was found")
	}
}

// recordingHandler is a slog.Handler that keeps what it gets.
type recordingHandler struct {
	level slog.Level
	mu    sync.Mutex
	got   []slog.Record
	seen  chan struct{}
}

func (h *recordingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.got = append(h.got, r)
	h.mu.Unlock()
	select {
	case h.seen <- struct{}{}:
	default:
	}
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func TestSetLoggerForwardsEngineRecords(t *testing.T) {
	ctx := ctxT(t)
	topic := unique("go-log")
	createTopic(t, topic, 1)
	h := &recordingHandler{level: slog.LevelInfo, seen: make(chan struct{}, 1)}
	must(t, SetLogger(slog.New(h)))
	defer SetLogger(nil)
	// Joining a group logs "joined group" at info.
	c := newConsumer(t, unique("go-log-group"))
	must(t, c.Subscribe(ctx, topic))
	pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	c.Poll(pctx)
	cancel()
	var joined slog.Record
	for joined.Message == "" {
		within(t, h.seen, "the joined group record")
		h.mu.Lock()
		for _, r := range h.got {
			if strings.HasPrefix(r.Message, "joined group") {
				joined = r
			}
		}
		h.mu.Unlock()
	}
	target := ""
	joined.Attrs(func(a slog.Attr) bool {
		if a.Key == "target" {
			target = a.Value.String()
		}
		return true
	})
	if joined.Level != slog.LevelInfo || !strings.HasPrefix(target, "cursus") {
		t.Fatalf("record %v %q target %q", joined.Level, joined.Message, target)
	}
	h.mu.Lock()
	for _, r := range h.got {
		if r.Level < slog.LevelInfo {
			t.Errorf("record below the logger's level: %v %s", r.Level, r.Message)
		}
	}
	h.mu.Unlock()
	// Off: the handler is no longer called once SetLogger(nil) returned.
	must(t, SetLogger(nil))
	h.mu.Lock()
	h.got = nil
	h.mu.Unlock()
	c2 := newConsumer(t, unique("go-log-off"))
	must(t, c2.Subscribe(ctx, topic))
	pctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	c2.Poll(pctx)
	cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) != 0 {
		t.Fatalf("%d records after SetLogger(nil)", len(h.got))
	}
}

func TestStatisticsAndHandlers(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-stats"), unique("go-stats-group")
	createTopic(t, topic, 1)
	p := newProducer(t, WithOption("client_id", "go-stats-producer"))
	ticks := make(chan *Statistics, 16)
	must(t, p.SetStatisticsHandler(20*time.Millisecond, func(s *Statistics) {
		select {
		case ticks <- s:
		default:
		}
		panic("a statistics handler's panic is contained")
	}))
	must(t, p.SetErrorHandler(func(error) {}))
	for i := 0; i < 3; i++ {
		if _, err := p.Send(ctx, Record{Topic: topic, Partition: 0, Value: []byte("abc")}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.Statistics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != "producer" || s.ClientID != "go-stats-producer" || s.RecordsSent != 3 || s.BytesSent < 9 ||
		s.ProduceLatency.Count == 0 || s.ProduceLatency.Max <= 0 || !strings.Contains(s.JSON, "records_sent") {
		t.Fatalf("producer statistics %+v", s)
	}
	// The periodic handler ticks more than once (it survived its panic).
	within(t, ticks, "first statistics")
	tick := within(t, ticks, "second statistics")
	if tick.Kind != "producer" {
		t.Fatalf("tick %+v", tick)
	}
	must(t, p.SetStatisticsHandler(0, nil))
	// The library's rule: a handler never called (the option left at 0) is refused.
	err = p.SetStatisticsHandler(0, func(*Statistics) {})
	var ce *Error
	if !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &ce) || ce.Fields["option"] != "statistics_interval_ms" {
		t.Fatalf("a statistics handler without an interval: %v", err)
	}

	c := newConsumer(t, group, WithOption("auto_offset_reset", "earliest"))
	must(t, c.SetErrorHandler(func(error) {}))
	must(t, c.Subscribe(ctx, topic))
	take(t, c, 2)
	cs, err := c.Statistics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Kind != "consumer" || cs.RecordsReceived < 2 || len(cs.Partitions) != 1 {
		t.Fatalf("consumer statistics %+v", cs)
	}
	row := cs.Partitions[0]
	if row.Topic != topic || row.Partition != 0 || row.Position != 2 || row.EndOffset != 3 || row.Lag != 1 {
		t.Fatalf("partition row %+v", row)
	}
	cticks := make(chan *Statistics, 1)
	must(t, c.SetStatisticsHandler(10*time.Millisecond, func(s *Statistics) {
		select {
		case cticks <- s:
		default:
		}
	}))
	if got := within(t, cticks, "consumer statistics"); got.Kind != "consumer" {
		t.Fatalf("consumer tick %+v", got)
	}
}

// startOwnBroker starts a broker of the test's own (args: more options of
// it), killed when the test ends; it returns its address and process.
func startOwnBroker(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	bin := os.Getenv("CURSUS_BROKER_BIN")
	if bin == "" {
		t.Fatal("CURSUS_BROKER_BIN is needed for a broker of the test's own")
	}
	args = append([]string{"--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, args...)
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	addr := ""
	if sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if a, ok := strings.CutPrefix(f, "addr="); ok {
				addr = a
			}
		}
	}
	if addr == "" {
		t.Fatalf("broker did not start: %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return addr, cmd
}

// createTopicAt creates a one-partition topic on the broker at addr.
func createTopicAt(t *testing.T, addr, topic string) {
	t.Helper()
	a, err := NewAdmin(ctxT(t), WithBootstrap(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.CreateTopic(ctxT(t), topic, 1); err != nil {
		t.Fatal(err)
	}
}

// Without OnLost, the library tells a loss as a revocation (OnRevoked).
func TestALossIsToldAsARevocationWithoutOnLost(t *testing.T) {
	ctx := ctxT(t)
	// Heartbeats far apart and a short session: the broker expires the
	// member before its next heartbeat, which then learns it is gone.
	config := t.TempDir() + "/broker.toml"
	must(t, os.WriteFile(config, []byte("group_session_timeout_ms = 300\n"), 0o600))
	addr, _ := startOwnBroker(t, "--config", config)
	createTopicAt(t, addr, "lost")
	c, err := NewConsumer(ctx, WithBootstrap(addr), WithGroup("lost-g"), WithOption("heartbeat_interval_ms", "1500"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	told := make(chan string, 16)
	must(t, c.SetRebalanceListener(&RebalanceListener{
		OnAssigned: func([]TopicPartition) { told <- "assigned" },
		OnRevoked:  func(p []TopicPartition) { told <- fmt.Sprintf("revoked %v", p) },
	}))
	must(t, c.Subscribe(ctx, "lost"))
	var seen []string
	for i := 0; i < 400 && len(seen) < 3; i++ {
		if _, err := pollFor(c, 50*time.Millisecond); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
	drain:
		for {
			select {
			case s := <-told:
				seen = append(seen, s)
			default:
				break drain
			}
		}
	}
	want := []string{"assigned", "revoked [{lost 0}]", "assigned"}
	if !slices.Equal(seen[:min(3, len(seen))], want) {
		t.Fatalf("told %v, want %v", seen, want)
	}
}

func TestProducerErrorHandlerGetsBackgroundErrors(t *testing.T) {
	ctx := ctxT(t)
	// A broker of this test's own, stopped under the producer.
	addr, cmd := startOwnBroker(t)
	createTopicAt(t, addr, "lost")
	p, err := NewProducer(ctx, WithBootstrap(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	errs := make(chan error, 8)
	must(t, p.SetErrorHandler(func(err error) {
		select {
		case errs <- err:
		default:
		}
		panic("an error handler's panic is contained")
	}))
	if _, err := p.Send(ctx, Record{Topic: "lost", Partition: 0, Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	err = within(t, errs, "a background error")
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != "connection_lost" || ce.Fields["broker"] == "" {
		t.Fatalf("background error %#v", err)
	}
}
