package reports

import (
	"slices"
	"testing"
)

// TestRejectedSpill: rows added in increasing order are read back from the
// temporary file as the input is taken in order, rows the input skips are
// left, and a row out of order moves everything into a map with the same
// answers.
func TestRejectedSpill(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  []int
		inMap bool
	}{
		{"in order", []int{3, 5, 9, 10, 400}, false},
		{"out of order", []int{5, 3, 9, 10, 400}, true},
		{"repeated", []int{3, 5, 5, 9, 10, 400}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &rejectedSpill{}
			defer s.close()
			for _, n := range tc.rows {
				s.add(n, "problema da linha "+string(rune('a'+n%26))+" ç")
			}
			if got := s.m != nil; got != tc.inMap {
				t.Fatalf("in a map: %v, want %v", got, tc.inMap)
			}
			if s.len() != 5 {
				t.Errorf("len %d, want 5", s.len())
			}
			w, err := s.want()
			if err != nil {
				t.Fatal(err)
			}
			// the input has rows 2..12, not 3 (a row the reader skipped) nor 400
			var got []int
			for n := 2; n <= 12; n++ {
				if n == 3 {
					continue
				}
				text, ok, err := w.take(n)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					if want := "problema da linha " + string(rune('a'+n%26)) + " ç"; text != want {
						t.Errorf("row %d: %q, want %q", n, text, want)
					}
					got = append(got, n)
				}
			}
			if !slices.Equal(got, []int{5, 9, 10}) {
				t.Errorf("taken %v, want [5 9 10]", got)
			}
			left, err := w.left()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(left, []int{3, 400}) {
				t.Errorf("left %v, want [3 400]", left)
			}
		})
	}
	s := &rejectedSpill{}
	if s.len() != 0 {
		t.Errorf("empty: len %d", s.len())
	}
	w, err := s.want()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := w.take(2); ok {
		t.Error("empty: row 2 taken")
	}
}
