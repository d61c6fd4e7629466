package trace

import (
	"errors"
	"fmt"
	"math"
)

var errVarint = errors.New("bad varint (cut short or over 64 bits)")

// decodeEvent decodes the next event of the current events chunk
// (FORMAT.md §5). It is the reader's hot loop.
func (r *Reader) decodeEvent(e *Event) error {
	raw := r.raw
	i := r.p
	idx := r.total - r.left
	if i >= len(raw) {
		return fmt.Errorf("the chunk ends after %d of its %d events", idx, r.total)
	}
	head := raw[i]
	k := Kind(head & kindMask)
	if !r.eventHead[head] {
		return r.badEventHead(head, idx)
	}
	ki := &r.kinds[k]
	var delta uint64
	ok := true
	switch i++; {
	case i < len(raw) && raw[i] < 0x80:
		delta, i = uint64(raw[i]), i+1
	case i+1 < len(raw) && raw[i+1] < 0x80:
		delta, i = uint64(raw[i]&0x7f)|uint64(raw[i+1])<<7, i+2
	default:
		delta, i, ok = uvarintLong(raw, i)
	}
	if !ok {
		return fmt.Errorf("event %d (%v): time delta: %w", idx, k, errVarint)
	}
	if delta > uint64(math.MaxInt64-r.time) {
		return fmt.Errorf("event %d (%v): time delta %d overflows the clock (time going backwards)", idx, k, delta)
	}
	t := r.time + int64(delta)
	e.Kind, e.Thread, e.Time = k, r.thread, t
	same := head&HeadS != 0
	prev := &r.prev[k]
	if same && ki.times == 0 && ki.n == ki.keep {
		// As decodeRawEvent: the kind's last arguments, but for the
		// correlation id. Written out in both, and not a call: one
		// shared function cost the decoders 4 to 10 % (interleaved runs).
		e.Args = *prev
		if ki.corr >= 0 {
			v := r.corr
			if head&HeadC == 0 {
				if v, i, ok = uvarint(raw, i); !ok {
					return fmt.Errorf("event %d (%v): argument %d: %w", idx, k, ki.corr, errVarint)
				}
				v = r.corr + uint64(unzigzag(v))
			} else if ki.begin {
				v++
			}
			r.corr = v
			e.Args[ki.corr] = v
		}
		r.time, r.p = t, i
		r.left--
		return nil
	}
	e.Args = [MaxArgs]uint64{}
	for j := 0; j < int(ki.keep); j++ {
		var v uint64
		switch ki.types[j] {
		case ArgCorr:
			if head&HeadC != 0 {
				v = r.corr
				if ki.begin {
					v++
				}
			} else {
				if v, i, ok = uvarint(raw, i); !ok {
					return fmt.Errorf("event %d (%v): argument %d: %w", idx, k, j, errVarint)
				}
				v = r.corr + uint64(unzigzag(v))
			}
			r.corr = v
		case ArgTime:
			if v, i, ok = uvarint(raw, i); !ok {
				return fmt.Errorf("event %d (%v): argument %d: %w", idx, k, j, errVarint)
			}
			v = decodeTime(v, t)
		default:
			if same {
				v = prev[j]
				break
			}
			if i < len(raw) && raw[i] < 0x80 {
				v, i = uint64(raw[i]), i+1
			} else if v, i, ok = uvarintLong(raw, i); !ok {
				return fmt.Errorf("event %d (%v): argument %d: %w", idx, k, j, errVarint)
			}
			if ki.types[j] == ArgInt {
				v = uint64(unzigzag(v))
			}
		}
		e.Args[j] = v
	}
	if ki.n > ki.keep {
		var err error
		if i, err = r.skipArgs(raw, i, ki, head); err != nil {
			return fmt.Errorf("event %d (%v): %w", idx, k, err)
		}
	}
	if !same {
		*prev = e.Args
	}
	r.time = t
	r.p = i
	r.left--
	return nil
}

// badEventHead says why head cannot start event idx of an events chunk.
func (r *Reader) badEventHead(head byte, idx uint64) error {
	k := Kind(head & kindMask)
	if !r.kinds[k].valid { // kind 0 is never valid
		return fmt.Errorf("event %d: unknown event kind %d (the file's kind table has no such timed kind)", idx, k)
	}
	return fmt.Errorf("event %d (%v): flags %#02x do not apply to this kind", idx, k, head&^kindMask)
}

// skipArgs decodes and drops the arguments past MaxArgs of an event whose
// kind the file's table gives more (FORMAT.md §4). A correlation id among
// them still moves the batch's previous one.
func (r *Reader) skipArgs(raw []byte, i int, ki *kindInfo, head byte) (int, error) {
	for j := int(ki.keep); j < int(ki.n); j++ {
		typ := ki.types[j]
		if typ == ArgCorr && head&HeadC != 0 {
			if ki.begin {
				r.corr++
			}
			continue
		}
		if typ != ArgCorr && typ != ArgTime && head&HeadS != 0 {
			continue
		}
		v, next, ok := uvarint(raw, i)
		if !ok {
			return i, fmt.Errorf("argument %d: %w", j, errVarint)
		}
		if typ == ArgCorr {
			r.corr += uint64(unzigzag(v))
		}
		i = next
	}
	return i, nil
}

// decodeDef decodes the next def of the current defs chunk (FORMAT.md §6).
func (r *Reader) decodeDef(d *Def) error {
	raw := r.raw
	i := r.p
	idx := r.total - r.left
	if i >= len(raw) {
		return fmt.Errorf("the chunk ends after %d of its %d defs", idx, r.total)
	}
	k := Kind(raw[i])
	i++
	ki := &r.kinds[k]
	if k <= maxEventKind || !ki.valid {
		return fmt.Errorf("def %d: unknown definition kind %d (the file's kind table has no such definition kind)", idx, k)
	}
	*d = Def{Kind: k}
	for j := 0; j < int(ki.n); j++ {
		v, next, ok := uvarint(raw, i)
		if !ok {
			return fmt.Errorf("def %d (%v): argument %d: %w", idx, k, j, errVarint)
		}
		if ki.types[j] == ArgInt {
			v = uint64(unzigzag(v))
		}
		if j < MaxArgs {
			d.Args[j] = v // the rest are dropped (FORMAT.md §4)
		}
		i = next
	}
	if ki.text {
		n, next, ok := uvarint(raw, i)
		switch {
		case !ok:
			return fmt.Errorf("def %d (%v): text length: %w", idx, k, errVarint)
		case n > MaxString:
			return fmt.Errorf("def %d (%v): text length %d is over the %d limit", idx, k, n, MaxString)
		case n > uint64(len(raw)-next):
			return fmt.Errorf("def %d (%v): text length %d runs past the chunk", idx, k, n)
		}
		d.Text = string(raw[next : next+int(n)])
		i = next + int(n)
	}
	r.p = i
	r.left--
	return nil
}
