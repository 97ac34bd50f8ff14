package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/migrate"
	"remessa/internal/migrate/migratetest"
	"remessa/pipeline/journal"
	"remessa/pipeline/listen"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// TestUpgradeRunsFrom8e335f2 takes the runs folder written by the binary
// of 8e335f2 (a boletos run killed after its 12th POST was sent, the
// embedded sandbox, the runs index, the listener's inbox; none with a
// version table) and uses it with this code: resume finishes the run
// with every row issued once (the charge whose answer was lost is found
// by its custom_id, not sent again), status follows it, the sandbox
// serves the old charges, and the inbox keeps its two old deliveries
// (a repeated one counts as a duplicate of the old row).
func TestUpgradeRunsFrom8e335f2(t *testing.T) {
	ctx := context.Background()
	root := migratetest.Unpack(t, "runs")
	runs := filepath.Join(root, "runs")
	dir := filepath.Join(runs, "20261127-235952-5b96dc")

	// the journal as the old binary left it: no version table, POSTs
	// intended and not answered, rows not yet sent
	if db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, journal.FileName)); err != nil {
		t.Fatal(err)
	} else {
		var intended, answered int
		if err := db.QueryRow(`SELECT count(*), count(done_at) FROM calls WHERE route LIKE 'POST%'`).Scan(&intended, &answered); err != nil {
			t.Fatal(err)
		}
		have, _, err := migrate.Version(ctx, db, &journal.Schema)
		db.Close()
		if err != nil || have != 0 || answered >= intended || answered >= 25 {
			t.Fatalf("the fixture's journal: version %d (%v), %d POSTs intended, %d answered; want 0, and a run half-way", have, err, intended, answered)
		}
	}

	if code, out, errs := runCLI("resume", dir, "--quiet"); code != exitOK {
		t.Fatalf("resume of the old run: %d %s %s", code, out, errs)
	}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 25 {
		t.Fatalf("%d rows in results.json, want the sample's 25", len(res.Rows))
	}
	ids := map[int64]bool{}
	for _, r := range res.Rows {
		if len(r.ChargeIDs) != 1 {
			t.Fatalf("row %s: charges %v, want exactly one", r.Key, r.ChargeIDs)
		}
		ids[r.ChargeIDs[0]] = true
	}
	if len(ids) != 25 {
		t.Fatalf("%d distinct charges for 25 rows", len(ids))
	}
	if ok, why := res.Totals.Reconciles(); !ok {
		t.Fatalf("totals: %s", why)
	}

	// runs.db moves to step 2: the old run's issued keys are found by key
	// (read from its results.json on the first look-up)
	x := &run.Index{Path: filepath.Join(runs, run.IndexFile)}
	found, err := x.RunsIssuing(ctx, res.Run.Service, []string{res.Rows[0].Key, res.Rows[24].Key, "NAO-EMITIDA"})
	if err != nil || len(found) != 2 || len(found[res.Rows[24].Key]) != 1 || found[res.Rows[0].Key][0].RunID != res.Run.ID {
		t.Fatalf("issued keys of the old run: %v %+v", err, found)
	}

	// status builds the ledger (situacao.db, new) from the service
	if code, out, errs := runCLI("status", dir); code != exitOK || !strings.Contains(out, "a vencer") {
		t.Fatalf("status: %d %q %q", code, out, errs)
	}
	l, err := status.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()

	// the sandbox serves the old charges: each custom_id once
	rn := sandboxtest.Start(t, sandbox.Config{DataDir: filepath.Join(runs, ".sandbox"), ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	cl := runtest.Client(t, rn)
	perCID := map[string]int{}
	for _, c := range listAll(t, cl) {
		if c.CustomID != nil {
			perCID[*c.CustomID]++
		}
	}
	if len(perCID) != 25 {
		t.Fatalf("%d custom_ids in the sandbox, want 25", len(perCID))
	}
	for cid, n := range perCID {
		if n != 1 || !strings.HasPrefix(cid, "manut-") {
			t.Errorf("custom_id %s: %d charges, want one", cid, n)
		}
	}

	// the listener's inbox: the two old deliveries, one of them again
	li, err := listen.Open(ctx, listen.Options{RunsDir: runs})
	if err != nil {
		t.Fatal(err)
	}
	defer li.Close()
	st, err := li.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// orphans, or pending again: a listener that finds runs it had not
	// indexed tries its orphans again
	if st.Items != 2 || st.Orphans+st.Pending != 2 || st.Deliveries != 2 {
		t.Fatalf("the old inbox: %+v, want 2 items, 2 orphans or pending, 2 deliveries", st)
	}
	srv := httptest.NewServer(li.Handler())
	defer srv.Close()
	resp, err := http.PostForm(srv.URL+"/notificacao", url.Values{"notification": {"tok-8e335f2-a"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st, err = li.Stats(ctx); err != nil || st.Items != 2 || st.Deliveries != 3 {
		t.Fatalf("after the old token again: %+v %v, want 2 items and 3 deliveries", st, err)
	}
}

// listAll lists every boleto of the sandbox, whatever its date.
func listAll(t *testing.T, cl *api.Client) []runtest.Listed {
	t.Helper()
	q := url.Values{"charge_type": {"billet"}, "begin_date": {"2026-01-01"}, "end_date": {time.Now().AddDate(1, 0, 0).Format("2006-01-02")}, "limit": {"1000"}}
	resp, err := cl.Do(context.Background(), api.V1, http.MethodGet, "/v1/charges?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data []runtest.Listed `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		t.Fatal(err)
	}
	return env.Data
}
