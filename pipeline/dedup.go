package pipeline

import (
	"hash/maphash"
	"math/bits"
	"sort"
)

// seenSet remembers strings by their 64-bit hash, with the row where each
// was first seen, in an open-addressing table of 8 bytes a slot instead of
// keeping the strings. The table is sized once for the most rows it may
// see (the readers stop at formats.DefaultMaxRows data rows): about 11 MB
// for a million, of which only the pages touched take memory.
//
// A slot holds 42 bits of the hash and the 0-based data row index (22
// bits); the slot's place comes from the hash's top bits. The row number
// as the spreadsheet shows it is index + an offset that changes only where
// the input skips lines (blank lines, fields over several lines), kept as
// a short list of breakpoints. Two different strings are taken for the
// same one only when the 42 bits agree and both land in the same stretch
// of the table (about 20 more bits): with a random seed per validation,
// about 1 chance in 10 million for a million rows.
type seenSet struct {
	seed  maphash.Seed
	slots []uint64 // fingerprint<<idxBits | index; 0 = empty
	count int
	max   int // entries allowed (load factor 0.8)
	// breaks are where row - index changes, in index order.
	breaks []rowBreak
}

type rowBreak struct{ index, delta int }

const (
	idxBits = 22
	idxMask = 1<<idxBits - 1
	// maxSeenRows is the last data row index a slot can hold.
	maxSeenRows = idxMask
)

// newSeenSet makes a set for at most maxEntries strings; more are not
// recorded (so not reported when they repeat).
func newSeenSet(seed maphash.Seed, maxEntries int) *seenSet {
	n := max(1024, maxEntries*10/8+maxEntries/16)
	return &seenSet{seed: seed, slots: make([]uint64, n), max: maxEntries}
}

func (s *seenSet) hash(key string) uint64 {
	return maphash.String(s.seed, key)
}

// add records key for the data row index (shown as row) and returns the
// row where it was first seen, or 0.
func (s *seenSet) add(key string, index, row int) int {
	return s.addHash(s.hash(key), index, row)
}

// touch loads the slot where the search for h starts and returns part of
// it (see rowValidator.touchKeys).
func (s *seenSet) touch(h uint64) uint64 {
	i, _ := bits.Mul64(h, uint64(len(s.slots)))
	return s.slots[i]
}

// fingerprint is the part of h a slot keeps, never 0.
func fingerprint(h uint64) uint64 {
	if fp := h & (1<<(64-idxBits) - 1); fp != 0 {
		return fp
	}
	return 1
}

func (s *seenSet) addHash(h uint64, index, row int) int {
	if index < 0 || index > maxSeenRows {
		return 0
	}
	fp := fingerprint(h)
	n := uint64(len(s.slots))
	i, _ := bits.Mul64(h, n) // the hash's top bits scaled to [0, n)
	for {
		switch sl := s.slots[i]; {
		case sl == 0:
			if s.count >= s.max {
				return 0 // full: not recorded
			}
			s.slots[i] = fp<<idxBits | uint64(index)
			s.count++
			if d := row - index; len(s.breaks) == 0 || s.breaks[len(s.breaks)-1].delta != d {
				s.breaks = append(s.breaks, rowBreak{index, d})
			}
			return 0
		case sl>>idxBits == fp:
			return s.rowOf(int(sl & idxMask))
		}
		if i++; i == n {
			i = 0
		}
	}
}

// rowOf is the row number of a recorded data row index.
func (s *seenSet) rowOf(index int) int {
	k := sort.Search(len(s.breaks), func(k int) bool { return s.breaks[k].index > index }) - 1
	return index + s.breaks[k].delta
}
