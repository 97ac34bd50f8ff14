package procstat

import "testing"

// TestPeakRSSGrows checks that the peak is a plausible figure and that it
// rises by about what a touched 64 MB buffer adds.
func TestPeakRSSGrows(t *testing.T) {
	before, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if before < 1000 || before > 8<<20 {
		t.Fatalf("peak RSS %d kB is not plausible for a test binary", before)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after, err := PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if grew := after - before; grew < 50<<10 {
		t.Fatalf("peak RSS grew by %d kB after touching 64 MB (from %d to %d)", grew, before, after)
	}
	_ = buf[len(buf)-1]
}
