package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReguaClusterRun: a run on PostgreSQL (--db) keeps its journal in the
// database, and the régua reads the run folder's: the run page says that
// no reminders go out for it and why, instead of calling its folder "not a
// run's folder (no journal.db)", and the follow job leaves it out (it
// would fail at every tick).
func TestReguaClusterRun(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	ctx := context.Background()
	dir := filepath.Join(srv.runsDir(), "20270210-100000-cluster")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// what a finished cluster run leaves in its folder: results.json, no
	// journal.db and, never synced, no ledger
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"rows":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Format(time.RFC3339)
	res, err := srv.db.ExecContext(ctx, `INSERT INTO drafts (kind, account_id, created_by, created_at, updated_at, input_name, input_file)
		VALUES ('boletos', 1, 1, ?, ?, 'boletos.xlsx', 'planilha.xlsx')`, at, at)
	if err != nil {
		t.Fatal(err)
	}
	did, _ := res.LastInsertId()
	res, err = srv.db.ExecContext(ctx, `INSERT INTO runs (draft_id, account_id, kind, name, run_id, dir, status, started_by, created_at, finished_at, cluster, units)
		VALUES (?, 1, 'boletos', 'Boletos', '20270210-100000-cluster', ?, 'done', 1, ?, ?, 1, 3)`, did, dir, at, at)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	rec, err := srv.loadRun(ctx, id)
	if err != nil || !rec.Cluster {
		t.Fatalf("the cluster run: %+v %v", rec, err)
	}

	v := srv.reminders(ctx, rec, "pt")
	if v == nil {
		t.Fatal("no régua section for the cluster run")
	}
	if v.Problem != "" {
		t.Errorf("the run page says the régua cannot be used: %q", v.Problem)
	}
	if v.Source != reguaFromCluster || v.Has {
		t.Errorf("régua from %q (steps %v), want %q and none", v.Source, v.Steps, reguaFromCluster)
	}
	for _, lang := range []string{"pt", "en"} {
		words := tr(lang, "regua.src."+v.Source)
		if !strings.Contains(words, "PostgreSQL") || !strings.Contains(words, "--db") || strings.Contains(words, "journal.db") {
			t.Errorf("the run page says %q", words)
		}
	}
	// an operator's own régua for it changes nothing: no pass runs over it
	if _, err := srv.db.ExecContext(ctx, `INSERT INTO regua_runs (run_id, mode, config, updated_by, updated_at) VALUES (?, 'own', '{}', 1, ?)`, id, at); err != nil {
		t.Fatal(err)
	}
	if r, src, err := srv.reguaFor(ctx, rec, noEnv); r != nil || src != reguaFromCluster || err != nil {
		t.Errorf("with a régua of its own: %v from %q, %v", r, src, err)
	}
	if n, err := srv.queueFollows(ctx); err != nil || n != 0 {
		t.Errorf("the follow job queued %d runs (%v), want none: the cluster run is not followed", n, err)
	}
}
