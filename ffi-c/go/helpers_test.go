// Test fixtures: the broker TestMain starts and helpers shared by the tests.

package cursus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// broker is the address of the broker started by TestMain.
var broker string

// TestMain starts a real cursus-broker ($CURSUS_BROKER_BIN, or uses an
// already running one at $CURSUS_TEST_BROKER) with a temporary data
// directory on a free loopback port; it stops the secure broker the TLS
// tests start on first use (security_test.go).
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer stopSecureBroker() // started on first use (security_test.go)
	if addr := os.Getenv("CURSUS_TEST_BROKER"); addr != "" {
		broker = addr
		return m.Run()
	}
	bin := os.Getenv("CURSUS_BROKER_BIN")
	if bin == "" {
		fmt.Fprintln(os.Stderr, "set CURSUS_BROKER_BIN (path of cursus-broker) or CURSUS_TEST_BROKER")
		return 2
	}
	dir, err := os.MkdirTemp("", "cursus-go-test")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--health-listen", "127.0.0.1:0", "--data-dir", dir+"/data")
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	cmd.Stderr = nil // the broker's log is not part of the test output
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		fmt.Fprintln(os.Stderr, "broker did not start")
		return 1
	}
	for _, f := range strings.Fields(sc.Text()) {
		if a, ok := strings.CutPrefix(f, "addr="); ok {
			broker = a
		}
	}
	go func() { // keeps the broker's stdout drained
		for sc.Scan() {
		}
	}()
	if broker == "" {
		fmt.Fprintln(os.Stderr, "unexpected broker line:", sc.Text())
		return 1
	}
	return m.Run()
}

var seq atomic.Int64

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
}

// hangGuard bounds waits that must end; it is never a timing assertion.
const hangGuard = 30 * time.Second

// ctxT is a test's context, with a deadline as a hang guard.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newAdmin(t testing.TB) *Admin {
	t.Helper()
	a, err := NewAdmin(ctxT(t), WithBootstrap(broker))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func createTopic(t testing.TB, topic string, partitions int) {
	t.Helper()
	if _, err := newAdmin(t).CreateTopic(ctxT(t), topic, partitions); err != nil {
		t.Fatal(err)
	}
}

func newProducer(t testing.TB, opts ...Option) *Producer {
	t.Helper()
	p, err := NewProducer(ctxT(t), append([]Option{WithBootstrap(broker)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// produceValues sends v0..v<n-1> to partition 0 of topic.
func produceValues(t testing.TB, topic string, n int) {
	t.Helper()
	ctx := ctxT(t)
	p := newProducer(t)
	for i := 0; i < n; i++ {
		if err := p.SendAsync(ctx, Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("v%d", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func newConsumer(t testing.TB, group string, opts ...Option) *Consumer {
	t.Helper()
	opts = append([]Option{WithBootstrap(broker), WithGroup(group), WithOption("fetch_max_wait_ms", "50")}, opts...)
	c, err := NewConsumer(ctxT(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// take polls one message at a time until n arrived; returns their offsets.
func take(t testing.TB, c *Consumer, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var offsets []int64
	for len(offsets) < n {
		m, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(offsets), n, err)
		}
		offsets = append(offsets, m.Offset)
	}
	return offsets
}

// takeBatches polls batches of at most the messages still wanted until n
// arrived; returns their offsets.
func takeBatches(t testing.TB, c *Consumer, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var offsets []int64
	for len(offsets) < n {
		batch, err := c.PollBatch(ctx, n-len(offsets))
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(offsets), n, err)
		}
		if len(batch) == 0 || len(batch) > n-len(offsets) {
			t.Fatalf("a batch of %d messages, %d wanted", len(batch), n-len(offsets))
		}
		for _, m := range batch {
			offsets = append(offsets, m.Offset)
		}
	}
	return offsets
}

// assertNothingMore checks that no further message arrives within a short
// while (an absence can only be checked over some time).
func assertNothingMore(t testing.TB, c *Consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if m, err := c.Poll(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want nothing more, got %+v, %v", m, err)
	}
}

// awaitMember waits until group has a member. A consumer joins its group in
// its first Poll, so once the group shows it, that Poll is in the library.
func awaitMember(t testing.TB, group string) {
	t.Helper()
	a := newAdmin(t)
	until := time.Now().Add(hangGuard)
	for {
		status, err := a.GroupStatus(ctxT(t), group)
		if err == nil && len(status.Members) > 0 {
			return
		}
		if time.Now().After(until) {
			t.Fatalf("group %s never got a member (last: %+v, %v)", group, status, err)
		}
		time.Sleep(10 * time.Millisecond) // the broker's view can only be polled
	}
}

// within returns what ch delivers, failing the test after hangGuard.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("%s: still waiting after %v", what, hangGuard)
		panic("unreachable")
	}
}
