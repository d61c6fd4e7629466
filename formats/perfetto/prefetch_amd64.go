package perfetto

import "unsafe"

// prefetch asks the CPU to bring the cache lines of p, p+64, p+128 and
// last into cache, without waiting for them: every line of an object from
// p to last (at most 192 bytes). The ring's rows are written long before
// they are read, and a chunk is written again a ring after its last read:
// both out of cache.
//
//go:noescape
func prefetch(p, last unsafe.Pointer)
