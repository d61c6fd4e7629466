package analysis

// depthStack is a stack of at most MaxDepth items, oldest first; a push
// onto a full one drops the oldest. It drops in constant time (amortized):
// the items slide up an array with MaxDepth/4 to spare and move back to
// its front when they reach its end. Moving the others down at each drop
// would cost MaxDepth moves a push once a thread is that deep: 1.3 s for
// a million pushes never popped, a 5 KB trace (tests/bench/README.md).
type depthStack[T any] struct {
	buf []T // buf[lo:] are the items
	lo  int
}

// items returns the items, oldest first: a view into the stack, valid
// until the next push or truncate. A nil stack has none.
func (s *depthStack[T]) items() []T {
	if s == nil {
		return nil
	}
	return s.buf[s.lo:]
}

// push adds v on top. On a full stack it drops the oldest item first and
// returns it, with true.
func (s *depthStack[T]) push(v T) (dropped T, ok bool) {
	if len(s.buf)-s.lo == MaxDepth {
		dropped, ok = s.buf[s.lo], true
		s.lo++
	}
	if len(s.buf) == cap(s.buf) && s.lo > 0 {
		// No room above: back to the front of an array with room to
		// spare (s.lo > 0 only once the stack was full).
		if cap(s.buf) < MaxDepth+MaxDepth/4 {
			s.buf = append(make([]T, 0, MaxDepth+MaxDepth/4), s.buf[s.lo:]...)
		} else {
			s.buf = s.buf[:copy(s.buf, s.buf[s.lo:])]
		}
		s.lo = 0
	}
	s.buf = append(s.buf, v)
	return dropped, ok
}

// truncate keeps the n oldest items.
func (s *depthStack[T]) truncate(n int) {
	if n == 0 {
		s.buf, s.lo = s.buf[:0], 0
		return
	}
	s.buf = s.buf[:s.lo+n]
}
