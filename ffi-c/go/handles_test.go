package cursus

import (
	"sync"
	"testing"
)

func TestSlotsHandBackWhatWasPut(t *testing.T) {
	var s slots[string]
	a, b := s.put("a"), s.put("b")
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d, %d", a, b)
	}
	if got := s.take(a); got != "a" {
		t.Fatalf("took %q", got)
	}
	c := s.put("c") // reuses a's slot
	if c != a || s.take(b) != "b" || s.take(c) != "c" {
		t.Fatalf("handles %d, %d, %d", a, b, c)
	}

	// Goroutines putting while another takes (as senders and the callback
	// thread do): every value comes back once, from its own handle.
	var ints slots[int]
	var wg sync.WaitGroup
	handles := make(chan [2]int, 64)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				v := g*1000 + i
				handles <- [2]int{int(ints.put(v)), v}
			}
		}()
	}
	go func() { wg.Wait(); close(handles) }()
	seen := map[int]bool{}
	for h := range handles {
		if got := ints.take(uintptr(h[0])); got != h[1] || seen[got] {
			t.Fatalf("handle %d gave %d, want %d (seen before: %v)", h[0], got, h[1], seen[got])
		}
		seen[h[1]] = true
	}
	if len(seen) != 4000 || len(ints.free) != len(ints.vals) {
		t.Fatalf("%d values came back; %d of %d slots free", len(seen), len(ints.free), len(ints.vals))
	}
}
