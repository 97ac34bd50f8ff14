package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzLoadJob: whatever a job file holds, Load answers a job or a *JobError
// whose every problem has a message in both languages and a line within
// the file — never a panic, never an error without a place.
func FuzzLoadJob(f *testing.F) {
	for _, p := range []string{"escola/carnes.yaml", "mensal/cobv.yaml", "boletos/boletos.yaml", "split/associados.yaml", "split/pedidos.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "samples", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("version: 1\nissue: {carnets: {repeats: 13}}\n"))
	f.Add([]byte("version: 1\nname: x\ninput: {file: a.csv}\nissue:\n  cobv:\n    due: ${X:+5d}\n    chave: \"{{ .Chave\"\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("&a [*a]"))
	f.Add([]byte("version: !!binary AAAA\n"))
	dir := f.TempDir()
	now := func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }
	getenv := func(k string) (string, bool) {
		if k == "PIX_CHAVE" {
			return "financeiro@example.com", true
		}
		return "", false
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		abs := filepath.Join(dir, "job.yaml")
		job, err := LoadBytes("job.yaml", abs, data, LoadOptions{Now: now, Getenv: getenv})
		if err == nil {
			if job == nil {
				t.Fatal("no job and no error")
			}
			return
		}
		var je *JobError
		if !errors.As(err, &je) || len(je.Problems) == 0 {
			t.Fatalf("error is not a *JobError with problems: %#v", err)
		}
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		for _, p := range je.Problems {
			if p.Message == "" || p.MessageEN == "" || p.Code == "" {
				t.Fatalf("problem without a message or code: %+v", p)
			}
			if p.Line < 0 || p.Line > lines {
				t.Fatalf("problem on line %d of a %d-line file: %+v", p.Line, lines, p)
			}
		}
	})
}
