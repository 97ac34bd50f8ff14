package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"remessa/internal/cnabtest"
)

// BenchmarkValidateCNAB240100k validates a CNAB 240 remessa of 100,000
// titles (P, Q and R each: 300,004 lines, 72 MB) as plan and run do,
// slips by default. Target (issue 25): under 2 s and under 100 MB.
func BenchmarkValidateCNAB240100k(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "COB100K.REM")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	err = cnabtest.Write240(f, 1, 100_000, func(i int) cnabtest.Title240 {
		t := cnabtest.OkTitle(fmt.Sprintf("K%07d", i), int64(10_000+i))
		t.WithR, t.MultaCod, t.MultaVal, t.Msg3 = true, "2", 200, "REFERENTE A FEVEREIRO"
		t.JurosCod, t.JurosVal = 2, 99
		return t
	}, "\r\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte("version: 1\ninput: {file: COB100K.REM}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	benchValidate(b, job, 100_000)
}
