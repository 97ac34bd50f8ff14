package pipeline

import (
	"hash/maphash"
	"strconv"
	"testing"
)

func TestSeenSetGrowth(t *testing.T) {
	s := newSeenSet(maphash.MakeSeed(), 0) // starts small: grows several times
	const n = 5000
	for i := 0; i < n; i++ {
		if first := s.add("key"+strconv.Itoa(i), i+2); first != 0 {
			t.Fatalf("key%d reported as seen on row %d", i, first)
		}
	}
	for i := 0; i < n; i++ {
		if first := s.add("key"+strconv.Itoa(i), n+i+2); first != i+2 {
			t.Fatalf("key%d repeated: first row %d, want %d", i, first, i+2)
		}
	}
	if s.count != n {
		t.Fatalf("count %d, want %d", s.count, n)
	}
	// hash 0 is stored as 1, not as an empty slot
	if s.addHash(1, 7) != 0 || s.addHash(1, 8) != 7 {
		t.Fatal("hash 1 not remembered")
	}
}
