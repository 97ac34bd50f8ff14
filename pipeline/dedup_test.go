package pipeline

import (
	"hash/maphash"
	"strconv"
	"testing"
)

func TestSeenSetRows(t *testing.T) {
	const n = 5000
	s := newSeenSet(maphash.MakeSeed(), n)
	// rows as a CSV shows them: header on line 1, a blank line after
	// index 99, a record over three lines at index 2000
	row := func(i int) int {
		r := i + 2
		if i > 99 {
			r++
		}
		if i > 2000 {
			r += 2
		}
		return r
	}
	for i := 0; i < n; i++ {
		if first := s.add("key"+strconv.Itoa(i), i, row(i)); first != 0 {
			t.Fatalf("key%d reported as seen on row %d", i, first)
		}
	}
	for i := 0; i < n; i++ {
		if first := s.add("key"+strconv.Itoa(i), n+i, row(n+i)); first != row(i) {
			t.Fatalf("key%d repeated: first row %d, want %d", i, first, row(i))
		}
	}
	if s.count != n {
		t.Fatalf("count %d, want %d", s.count, n)
	}
	// a full set still finds what it holds, but records nothing more
	if s.add("one more", 2*n, 2*n+2) != 0 || s.add("one more", 2*n+1, 2*n+3) != 0 || s.add("key7", 2*n+2, 2*n+4) != row(7) {
		t.Fatal("a full set: wrong answers")
	}
	// a hash whose kept bits are 0 is still remembered
	t2 := newSeenSet(maphash.MakeSeed(), 10)
	if t2.addHash(1<<63, 0, 7) != 0 || t2.addHash(1<<63, 1, 8) != 7 {
		t.Fatal("hash with zero fingerprint bits not remembered")
	}
}
