package pipeline

import (
	"hash/maphash"
	"math/bits"
)

// seenSet remembers 64-bit hashes of strings with the row (source row
// number) where each was first seen, in an open-addressing table of 12
// bytes a slot, instead of keeping the strings: a million keys cost about
// 15 MB when the table is sized up front (sizeHint) and at most twice that
// while it grows. Two different strings with the same 64-bit hash would be
// reported as duplicates; with a random seed per validation the chance for
// a million rows is about 3 in 100 million.
type seenSet struct {
	seed  maphash.Seed
	hs    []uint64 // 0 = empty slot (hash 0 is mapped to 1)
	rows  []uint32
	count int
}

// maxLoad is the load factor (in tenths) at which the table grows.
const maxLoad = 8

func newSeenSet(seed maphash.Seed, sizeHint int) *seenSet {
	n := 1024
	if want := sizeHint * 10 / maxLoad; want > n {
		n = want + want/16
	}
	return &seenSet{seed: seed, hs: make([]uint64, n), rows: make([]uint32, n)}
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

func (s *seenSet) addHash(h uint64, row int) int {
	if (s.count+1)*10 > len(s.hs)*maxLoad {
		s.grow()
	}
	n := uint64(len(s.hs))
	i, _ := bits.Mul64(h, n) // h scaled to [0, n)
	for {
		switch s.hs[i] {
		case 0:
			s.hs[i], s.rows[i] = h, uint32(row)
			s.count++
			return 0
		case h:
			return int(s.rows[i])
		}
		if i++; i == n {
			i = 0
		}
	}
}

func (s *seenSet) grow() {
	old, oldRows := s.hs, s.rows
	s.hs = make([]uint64, len(old)*2)
	s.rows = make([]uint32, len(old)*2)
	s.count = 0
	for i, h := range old {
		if h != 0 {
			s.addHash(h, int(oldRows[i]))
		}
	}
}
