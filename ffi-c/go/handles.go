package cursus

import "sync"

// slots holds values handed to C as integers (a callback's user_data) until
// C hands them back once: what cgo.Handle does, for the callbacks of the
// send paths. A cgo.Handle lives in a sync.Map, whose trie grows with the
// sends in flight (hundreds of thousands while a producer's queue drains):
// its Store, Load and Delete were 11 % of a send-with-callback profile. A
// slot is an index into a slice, reused once taken (a free list).
type slots[T any] struct {
	mu   sync.Mutex
	vals []T
	free []uint32 // indices of vals that are free
}

// put stores v and returns its handle (never 0: 0 means "no callback").
func (s *slots[T]) put(v T) uintptr {
	s.mu.Lock()
	var i uint32
	if n := len(s.free); n > 0 {
		i = s.free[n-1]
		s.free = s.free[:n-1]
		s.vals[i] = v
	} else {
		i = uint32(len(s.vals))
		s.vals = append(s.vals, v)
	}
	s.mu.Unlock()
	return uintptr(i) + 1
}

// take returns the value of handle h and frees its slot. Each handle is
// taken exactly once (by its callback, or by the caller when the call
// that was to call it back failed).
func (s *slots[T]) take(h uintptr) T {
	i := uint32(h - 1)
	var zero T
	s.mu.Lock()
	v := s.vals[i]
	s.vals[i] = zero // no reference kept to a delivered callback
	s.free = append(s.free, i)
	s.mu.Unlock()
	return v
}
