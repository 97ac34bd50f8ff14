package runtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"remessa/pipeline/run"
)

// Shared is a run issued once per test process, of which each test takes
// its own copy (Shared.Issue): the job and its input, the run folder and
// the embedded sandbox's data, copied file by file into the test's
// temporary folder, with a new sandbox started on the copy. Tests that pay,
// move the sandbox's clock or sync a ledger each change only their copy, so
// they can run in parallel, and the 480 carnet parcels or the batches of
// cobv are issued once instead of once per test.
//
// A package keeps its Shared runs in package variables and calls Remove on
// each from TestMain after the tests.
type Shared struct {
	job   string
	write func(work string) error // writes the job file and its input into work

	once sync.Once
	work string // the template: the job, its input, sb/ (the sandbox's data, closed) and out/
	rel  string // the run folder, relative to work
	err  error
}

// ShareSample is a Shared run of a sample's job (its job file and sheet
// copied as Sample copies them): ShareSample("../../samples/escola",
// "carnes.yaml", "alunos.xlsx").
func ShareSample(sample, job string, others ...string) *Shared {
	return &Shared{job: job, write: func(work string) error {
		for _, f := range append([]string{job}, others...) {
			b, err := os.ReadFile(filepath.Join(sample, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(work, f), b, 0o644); err != nil {
				return err
			}
		}
		return nil
	}}
}

// ShareCobv is a Shared run of Cobv's n due-date Pix charges.
func ShareCobv(n int) *Shared {
	return &Shared{job: "cobv.yaml", write: func(work string) error { return writeCobv(work, n) }}
}

// issue makes the template: the job issued on an embedded sandbox that is
// closed afterwards, so its data can be copied.
func (s *Shared) issue() {
	s.work, s.err = os.MkdirTemp("", "remessa-shared-run")
	if s.err != nil {
		return
	}
	if s.err = s.write(s.work); s.err != nil {
		return
	}
	rn, err := run.StartEmbedded(filepath.Join(s.work, "sb"))
	if err != nil {
		s.err = err
		return
	}
	out, err := run.Run(context.Background(), filepath.Join(s.work, s.job), run.Options{Embedded: rn, RunsDir: filepath.Join(s.work, "out"), Getenv: NoEnv})
	if cerr := rn.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close the sandbox: %w", cerr)
	}
	if err == nil && out.ExitCode() != 0 {
		err = fmt.Errorf("exit code %d", out.ExitCode())
	}
	if err != nil {
		s.err = fmt.Errorf("issue %s: %w", s.job, err)
		return
	}
	s.rel, s.err = filepath.Rel(s.work, out.Dir)
}

// Issue returns the test's own copy of the shared run, on a new embedded
// sandbox over its own copy of the sandbox's data (closed when the test
// ends). The first call issues the run.
func (s *Shared) Issue(t testing.TB) *Issued {
	t.Helper()
	s.once.Do(s.issue)
	if s.err != nil {
		t.Fatal(s.err)
	}
	work := t.TempDir()
	if err := copyTree(s.work, work); err != nil {
		t.Fatalf("copy the shared run: %v", err)
	}
	rn, err := run.StartEmbedded(filepath.Join(work, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	out := &run.Outcome{Dir: filepath.Join(work, s.rel)}
	full, err := out.LoadResults()
	if err != nil {
		t.Fatalf("the shared run's copy: %v", err)
	}
	out.RunID, out.Results = full.Run.ID, full
	return &Issued{Work: work, Dir: out.Dir, Sandbox: rn, Results: full, Outcome: out}
}

// Remove deletes the template (a TestMain calls it after the tests).
func (s *Shared) Remove() {
	s.once.Do(func() {})
	if s.work != "" {
		os.RemoveAll(s.work)
	}
}

// copyTree copies the files and folders under from into to.
func copyTree(from, to string) error {
	return filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, fi.Mode().Perm()|0o700)
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		w, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, in); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
}
