package formats

import (
	"strconv"
	"strings"
	"testing"
)

// TestArena: strings taken from an arena keep their text while later
// strings fill the block, start new blocks, or overflow what Begin asked.
func TestArena(t *testing.T) {
	var a Arena
	var got, want []string
	for i := 0; i < 20000; i++ {
		s := "valor-" + strconv.Itoa(i)
		switch i % 3 {
		case 0:
			got = append(got, a.Bytes([]byte(s)))
		case 1:
			a.Begin(2) // less than written
			a.WriteString(s[:3])
			a.Write([]byte(s[3:]))
			if a.Len() != len(s) {
				t.Fatalf("Len %d, want %d", a.Len(), len(s))
			}
			got = append(got, a.End())
		default:
			big := strings.Repeat(s, 1000) // longer than several per block
			got = append(got, a.Bytes([]byte(big)))
			s = big
		}
		want = append(want, s)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d changed: %.20q, want %.20q", i, got[i], want[i])
		}
	}
	if a.Bytes(nil) != "" {
		t.Fatal("empty bytes")
	}
}
