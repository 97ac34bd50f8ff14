package pipeline

import (
	"hash/maphash"
	"math/bits"
)

// seenSet remembers 64-bit hashes of strings with the row (source row
// number) where each was first seen, in an open-addressing table of 12
// bytes a slot, instead of keeping the strings: a million keys cost about
// 15 MB when the table is sized up front (sizeHint) and at most twice that
// while it grows. The hash and the row of a slot sit side by side, so an
// insert touches one cache line, not two. Two different strings with the
// same 64-bit hash would be reported as duplicates; with a random seed per
// validation the chance for a million rows is about 3 in 100 million.
type seenSet struct {
	seed  maphash.Seed
	slots []seenSlot
	count int
}

// seenSlot is a hash (lo, hi; 0 = empty slot, hash 0 is mapped to 1) and
// the row where it was first seen.
type seenSlot struct{ lo, hi, row uint32 }

// maxLoad is the load factor (in tenths) at which the table grows.
const maxLoad = 8

func newSeenSet(seed maphash.Seed, sizeHint int) *seenSet {
	n := 1024
	if want := sizeHint * 10 / maxLoad; want > n {
		n = want + want/16
	}
	return &seenSet{seed: seed, slots: make([]seenSlot, n)}
}

func (s *seenSet) hash(key string) uint64 {
	h := maphash.String(s.seed, key)
	if h == 0 {
		h = 1
	}
	return h
}

// add records key at row and returns the row where it was first seen, or 0.
func (s *seenSet) add(key string, row int) int {
	return s.addHash(s.hash(key), row)
}

// touch loads the slot where the search for h starts and returns part of
// it (see rowValidator.touchKeys).
func (s *seenSet) touch(h uint64) uint32 {
	i, _ := bits.Mul64(h, uint64(len(s.slots)))
	return s.slots[i].lo
}

func (s *seenSet) addHash(h uint64, row int) int {
	if (s.count+1)*10 > len(s.slots)*maxLoad {
		s.grow()
	}
	lo, hi := uint32(h), uint32(h>>32)
	n := uint64(len(s.slots))
	i, _ := bits.Mul64(h, n) // h scaled to [0, n)
	for {
		sl := &s.slots[i]
		switch {
		case sl.lo == 0 && sl.hi == 0:
			*sl = seenSlot{lo, hi, uint32(row)}
			s.count++
			return 0
		case sl.lo == lo && sl.hi == hi:
			return int(sl.row)
		}
		if i++; i == n {
			i = 0
		}
	}
}

func (s *seenSet) grow() {
	old := s.slots
	s.slots = make([]seenSlot, len(old)*2)
	s.count = 0
	for _, sl := range old {
		if sl.lo != 0 || sl.hi != 0 {
			s.addHash(uint64(sl.hi)<<32|uint64(sl.lo), int(sl.row))
		}
	}
}
