package run_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"remessa/pipeline/journal"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// TestResumeOldFormatJournal: a run stopped by its quota whose journal is
// in the format written before row values were compressed (JSON text, the
// key in its own column, no dictionary) resumes and issues the rest, each
// row exactly once.
func TestResumeOldFormatJournal(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payers(12, 4)
	job := writeJob(t, dir, "carnets", ps, "service: sandbox")
	ctx := context.Background()
	out, err := run.Run(ctx, job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Quota: 5, Concurrency: 1})
	if err != nil || out.Stop == nil {
		t.Fatalf("want a quota stop: %v %v", err, out.Stop)
	}
	path := filepath.Join(out.Dir, journal.FileName)
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := j.Rows(ctx)
	j.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	text := func(b []byte) any {
		if b == nil {
			return nil
		}
		return string(b)
	}
	for _, r := range rows {
		if _, err := db.Exec(`UPDATE rows SET key=?, info=?, req=?, res=? WHERE idx=?`, r.Key, string(r.Info), text(r.Req), text(r.Res), r.Index); err != nil {
			t.Fatal(err)
		}
	}
	// (and no schema version table: those binaries wrote none)
	for _, q := range []string{`DELETE FROM meta WHERE k LIKE 'journal.dict%'`, `DROP TABLE chunks`, `DROP TABLE ` + journal.Schema.Table} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	out2, err := run.Resume(ctx, out.Dir, run.Options{BaseURL: rn.URL, Getenv: remoteEnv, Quota: 1000})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if out2.ExitCode() != 0 {
		t.Fatalf("resume: exit %d stop %v", out2.ExitCode(), out2.Stop)
	}
	assertOneCarnetEach(t, client(t, rn, testClientID, testClientSecret), out.RunID, ps, 3)
	if out2.Results.Totals.Issued.Rows != len(ps) {
		t.Fatalf("totals after resume %+v", out2.Results.Totals)
	}
	db, _ = sql.Open("sqlite", "file:"+path)
	defer db.Close()
	var blobs int
	if err := db.QueryRow(`SELECT count(*) FROM rows WHERE typeof(info)<>'text' OR typeof(res)='blob'`).Scan(&blobs); err != nil || blobs != 0 {
		t.Fatalf("%d rows written compressed into an old journal (%v)", blobs, err)
	}
}
