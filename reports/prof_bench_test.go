package reports

import (
	"os"
	"testing"
)

// BenchmarkWriteFromFile times WriteFromFile on the results.json of
// REMESSA_BIG_RESULTS (see TestWriteBigResults).
func BenchmarkWriteFromFile(b *testing.B) {
	dir := os.Getenv("REMESSA_BIG_RESULTS")
	if dir == "" {
		b.Skip("set REMESSA_BIG_RESULTS=DIR holding a results.json")
	}
	out := b.TempDir()
	for b.Loop() {
		if _, _, err := WriteFromFile(out, dir+"/results.json", Options{Now: fixedNow}); err != nil {
			b.Fatal(err)
		}
	}
}
