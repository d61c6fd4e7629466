package analysis

// The waiting launches' correlation ids, in ring order, mostly come as
// long runs of ascending ids: each thread's launches in one batch of the
// trace. waitIndex finds a launch by binary search in the run whose range
// holds its id, which costs nothing per launch but a compare; only when the
// ring holds more than maxRuns runs does it fall back to corrIndex (put and
// del per launch, each a cache miss in a table larger than the cache), and
// stays there.
const maxRuns = 64

// corrRun is a run of waiting launches with strictly ascending correlation
// ids: n of them from ring index pos on, ids first..last.
type corrRun struct {
	pos, n      int
	first, last uint64
}

// index records that the launch at ring index i, the newest, has id corr.
func (pr *Pairer) index(corr uint64, i int) {
	if pr.hashed {
		pr.waiting.put(corr, int32(i)) // a reused corr: the newer launch takes the claim
		return
	}
	if n := len(pr.runs); n > 0 && pr.runs[n-1].last < corr {
		pr.runs[n-1].n++
		pr.runs[n-1].last = corr
		return
	}
	if len(pr.runs) == maxRuns {
		pr.hashed, pr.runs = true, nil
		for k := range pr.n { // oldest first, so that a reused corr maps to the newest
			j := (pr.head + k) % len(pr.ring)
			pr.waiting.put(pr.ring[j].Corr, int32(j))
		}
		return
	}
	pr.runs = append(pr.runs, corrRun{pos: i, n: 1, first: corr, last: corr})
}

// unindex forgets the oldest waiting launch, at ring index pr.head.
func (pr *Pairer) unindex() {
	if pr.hashed {
		pr.waiting.del(pr.ring[pr.head].Corr, int32(pr.head))
		return
	}
	r := &pr.runs[0]
	if r.n--; r.n == 0 {
		pr.runs = pr.runs[1:]
		return
	}
	if r.pos++; r.pos == len(pr.ring) {
		r.pos = 0
	}
	r.first = pr.ring[r.pos].Corr
}

// lookup returns the ring index of the newest waiting launch with id corr.
func (pr *Pairer) lookup(corr uint64) (int, bool) {
	if pr.hashed {
		i, ok := pr.waiting.get(corr)
		return int(i), ok
	}
	for k := len(pr.runs) - 1; k >= 0; k-- {
		r := &pr.runs[k]
		if corr < r.first || corr > r.last {
			continue
		}
		lo, hi := 0, r.n // ids of the run's launches lo.. are >= corr
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			j := r.pos + m
			if j >= len(pr.ring) {
				j -= len(pr.ring)
			}
			if pr.ring[j].Corr < corr {
				lo = m + 1
			} else {
				hi = m
			}
		}
		j := r.pos + lo
		if j >= len(pr.ring) {
			j -= len(pr.ring)
		}
		if lo < r.n && pr.ring[j].Corr == corr {
			return j, true
		}
	}
	return 0, false
}

// corrIndex maps correlation ids to ring indexes: open addressing with
// linear probing and backward-shift deletion, cheaper than a Go map here.
// A slot's key, value and use share one 16-byte entry, so that a probe
// touches one cache line.
type corrIndex struct {
	e []corrEntry
	n int
}

type corrEntry struct {
	key  uint64
	val  int32
	used bool
}

func hash64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return k
}

func (c *corrIndex) get(k uint64) (int32, bool) {
	if c.n == 0 {
		return 0, false
	}
	m := uint64(len(c.e) - 1)
	for i := hash64(k) & m; c.e[i].used; i = (i + 1) & m {
		if c.e[i].key == k {
			return c.e[i].val, true
		}
	}
	return 0, false
}

func (c *corrIndex) put(k uint64, v int32) {
	if 2*(c.n+1) > len(c.e) {
		c.grow()
	}
	m := uint64(len(c.e) - 1)
	i := hash64(k) & m
	for ; c.e[i].used; i = (i + 1) & m {
		if c.e[i].key == k {
			c.e[i].val = v
			return
		}
	}
	c.e[i] = corrEntry{k, v, true}
	c.n++
}

func (c *corrIndex) grow() {
	old := c.e
	c.e = make([]corrEntry, max(64, 2*len(old)))
	c.n = 0
	for _, e := range old {
		if e.used {
			c.put(e.key, e.val)
		}
	}
}

// del removes k when it maps to v.
func (c *corrIndex) del(k uint64, v int32) {
	if c.n == 0 {
		return
	}
	m := uint64(len(c.e) - 1)
	i := hash64(k) & m
	for ; c.e[i].used; i = (i + 1) & m {
		if c.e[i].key == k {
			break
		}
	}
	if !c.e[i].used || c.e[i].val != v {
		return
	}
	c.e[i].used = false
	c.n--
	// Shift back the entries of the probe run after i.
	for j := (i + 1) & m; c.e[j].used; j = (j + 1) & m {
		h := hash64(c.e[j].key) & m
		// Move j to i when its home h is not within (i, j] cyclically.
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			c.e[i] = c.e[j]
			c.e[j].used = false
			i = j
		}
	}
}
