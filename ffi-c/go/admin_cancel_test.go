// Cancelling calls the library cannot interrupt: the call is abandoned and
// finishes in the background, owning (and freeing) everything it uses.

package cursus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// prompt bounds how long a cancelled call may take to return. The stalled
// request itself would wait far longer (until the proxy lets it through).
const prompt = 5 * time.Second

// stallProxy forwards TCP between clients and the broker. While held, it
// keeps what clients send (their requests are in flight, unanswered) and
// reports on arrived that a request is waiting.
type stallProxy struct {
	addr    string
	arrived chan struct{}

	mu     sync.Mutex
	open   chan struct{} // closed while not held
	conns  []net.Conn
	closed bool
}

func newStallProxy(t *testing.T) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{addr: ln.Addr().String(), arrived: make(chan struct{}, 1), open: make(chan struct{})}
	close(p.open)
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed = true
		for _, c := range p.conns {
			c.Close()
		}
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", broker)
			if err != nil {
				client.Close()
				continue
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				client.Close()
				server.Close()
				return
			}
			p.conns = append(p.conns, client, server)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(client, server) }()
			go p.forward(server, client)
		}
	}()
	return p
}

// forward copies a client's bytes to the broker, waiting while held.
func (p *stallProxy) forward(server, client net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			open := p.open
			p.mu.Unlock()
			select {
			case <-open:
			default:
				select {
				case p.arrived <- struct{}{}:
				default:
				}
				<-open
			}
			if _, err := server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			server.Close()
			return
		}
	}
}

func (p *stallProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = make(chan struct{})
	select { // forget earlier arrivals
	case <-p.arrived:
	default:
	}
}

func (p *stallProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.open)
}

// adminCalls are the Admin methods exercised, each naming its own topic
// (or group) so what an abandoned call did can be checked afterwards.
func adminCalls(a *Admin, prefix, existing string) []struct {
	name string
	call func(context.Context) error
} {
	return []struct {
		name string
		call func(context.Context) error
	}{
		{"CreateTopic", func(ctx context.Context) error {
			_, err := a.CreateTopic(ctx, prefix+"-created", 1)
			return err
		}},
		{"CreateTopicWithOptions", func(ctx context.Context) error {
			_, err := a.CreateTopicWithOptions(ctx, prefix+"-with-options",
				TopicOptions{"partitions": "2", "cleanup_policy": "delete"})
			return err
		}},
		{"AlterTopicConfig", func(ctx context.Context) error {
			_, err := a.AlterTopicConfig(ctx, existing, DefaultMinInSyncReplicas)
			return err
		}},
		{"DescribeTopic", func(ctx context.Context) error {
			_, err := a.DescribeTopic(ctx, existing)
			return err
		}},
		{"Metadata", func(ctx context.Context) error {
			_, err := a.Metadata(ctx, existing)
			return err
		}},
		{"ListOffsets", func(ctx context.Context) error {
			_, err := a.ListOffsets(ctx, existing, AllPartitions)
			return err
		}},
		{"GroupStatus", func(ctx context.Context) error {
			_, err := a.GroupStatus(ctx, prefix+"-group")
			return err
		}},
		{"TruncateTopic", func(ctx context.Context) error {
			_, err := a.TruncateTopic(ctx, prefix+"-missing", 1)
			return err
		}},
		{"DeleteTopic", func(ctx context.Context) error {
			_, err := a.DeleteTopic(ctx, prefix+"-missing", true)
			return err
		}},
		{"ListTopics", func(ctx context.Context) error {
			_, err := a.ListTopics(ctx)
			return err
		}},
		{"ListGroups", func(ctx context.Context) error {
			_, err := a.ListGroups(ctx)
			return err
		}},
		{"Help", func(ctx context.Context) error {
			_, err := a.Help(ctx)
			return err
		}},
	}
}

// awaitTopics waits until every topic exists (an abandoned call finishes
// in the background, so its effect can only be polled for).
func awaitTopics(t *testing.T, a *Admin, topics ...string) {
	t.Helper()
	until := time.Now().Add(hangGuard)
	for {
		names, err := a.ListTopics(ctxT(t))
		if err == nil && !slices.ContainsFunc(topics, func(topic string) bool { return !slices.Contains(names, topic) }) {
			return
		}
		if time.Now().After(until) {
			t.Fatalf("topics %v never all appeared (last: %v, %v)", topics, names, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCancellingAdminCallsInFlight cancels each admin call while its
// request waits at a stalled broker: the call returns context.Canceled at
// once, and once the broker answers, the abandoned call completes with its
// arguments intact.
func TestCancellingAdminCallsInFlight(t *testing.T) {
	existing, prefix := unique("go-cancel-admin"), unique("go-cancel-admin-new")
	createTopic(t, existing, 1)
	proxy := newStallProxy(t)
	a, err := NewAdmin(ctxT(t), WithBootstrap(proxy.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, c := range adminCalls(a, prefix, existing) {
		proxy.hold()
		ctx, cancel := context.WithCancel(context.Background())
		result := make(chan error, 1)
		go func() { result <- c.call(ctx) }()
		within(t, proxy.arrived, c.name+": the request reaching the stalled broker")
		cancel()
		select {
		case err := <-result:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: want context.Canceled, got %v", c.name, err)
			}
		case <-time.After(prompt):
			t.Fatalf("%s: still waiting %v after cancel", c.name, prompt)
		}
		proxy.release()
	}
	direct := newAdmin(t)
	awaitTopics(t, direct, prefix+"-created", prefix+"-with-options")
	if info, err := direct.DescribeTopic(ctxT(t), prefix+"-with-options"); err != nil || info.Definition.Partitions != 2 {
		t.Fatalf("the abandoned CreateTopicWithOptions made %+v, %v", info, err)
	}
}

// cancelOnWait is a context cancelled the moment a call, having checked
// Err, asks for its Done channel to wait on: before its C call can have
// started. The call is abandoned as early as it can be.
type cancelOnWait struct {
	context.Context
	checked atomic.Bool
	once    sync.Once
	done    chan struct{}
}

func newCancelOnWait() *cancelOnWait {
	return &cancelOnWait{Context: context.Background(), done: make(chan struct{})}
}

func (c *cancelOnWait) Done() <-chan struct{} {
	if c.checked.Load() {
		c.once.Do(func() { close(c.done) })
	}
	return c.done
}

func (c *cancelOnWait) Err() error {
	c.checked.Store(true)
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// TestAdminCallsAbandonedAtOnce abandons admin calls before their C call
// can have started, many times over: the calls still run in the
// background, with their own copies of the arguments (every topic they
// create has its name), under -race and without crashing.
func TestAdminCallsAbandonedAtOnce(t *testing.T) {
	existing := unique("go-abandon-admin")
	createTopic(t, existing, 1)
	a := newAdmin(t)
	var created []string
	for i := 0; i < 20; i++ {
		prefix := unique(fmt.Sprintf("go-abandon-admin-%02d-with-a-longer-name", i))
		created = append(created, prefix+"-created", prefix+"-with-options")
		for _, c := range adminCalls(a, prefix, existing) {
			if err := c.call(newCancelOnWait()); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: want context.Canceled (or done), got %v", c.name, err)
			}
		}
	}
	awaitTopics(t, a, created...)
}

// TestClientCallsAbandonedAtOnce does the same for the producer's Send
// (whose caller reuses its buffer as soon as Send returns) and the
// consumer's calls: every record arrives intact and the abandoned
// CommitOffsets commits what it was given.
func TestClientCallsAbandonedAtOnce(t *testing.T) {
	ctx := ctxT(t)
	topic, group := unique("go-abandon-client"), unique("go-abandon-client-group")
	createTopic(t, topic, 1)
	p := newProducer(t)
	const n = 20
	want, buf := map[string]bool{}, make([]byte, 8)
	for i := 0; i < n; i++ {
		copy(buf, fmt.Sprintf("v%07d", i))
		want[string(buf)] = true
		if _, err := p.Send(newCancelOnWait(), Record{Topic: topic, Partition: 0, Value: buf}); err != nil &&
			!errors.Is(err, context.Canceled) {
			t.Fatalf("send: %v", err)
		}
		copy(buf, "XXXXXXXX")
	}
	c := newConsumer(t, group, WithOption("auto_offset_reset", "earliest"), WithOption("enable_auto_commit", "false"))
	abandoned := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	abandoned("subscribe", c.Subscribe(newCancelOnWait(), topic))
	// A pattern registers its group differently from a topic list, and the
	// abandoned calls finish in any order: a group registered by the pattern
	// first would refuse the topic subscription below (selector_conflict).
	// So the pattern subscription gets a consumer and group of its own.
	pc := newConsumer(t, group+"-pattern")
	abandoned("subscribe pattern", pc.SubscribePattern(newCancelOnWait(), topic))
	if err := c.Subscribe(ctx, topic); err != nil {
		t.Fatal(err)
	}
	for len(want) > 0 {
		m, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("%v (still wanted: %v)", err, want)
		}
		if !want[string(m.Value)] {
			t.Fatalf("unexpected record %q (still wanted: %v)", m.Value, want)
		}
		delete(want, string(m.Value))
	}
	for i := 0; i < n; i++ {
		_, _, err := c.Committed(newCancelOnWait(), topic, 0)
		abandoned("committed", err)
		_, err = c.Assignment(newCancelOnWait())
		abandoned("assignment", err)
		_, err = c.MemberID(newCancelOnWait())
		abandoned("member id", err)
	}
	abandoned("commit offsets", c.CommitOffsets(newCancelOnWait(), map[TopicPartition]int64{{topic, 0}: 5}))
	until := time.Now().Add(hangGuard)
	for {
		off, found, err := c.Committed(ctx, topic, 0)
		if err == nil && found && off == 5 {
			break
		}
		if time.Now().After(until) {
			t.Fatalf("the abandoned commit never showed: %d %v %v", off, found, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
