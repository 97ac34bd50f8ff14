package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/sandbox"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

// TestStatusCommand: status on an embedded run, then on the same data
// served by a sandbox (as `remessa sandbox --data <runs>/.sandbox` would)
// after a slip was paid there; a folder that is not a run is bad usage.
func TestStatusCommand(t *testing.T) {
	runs := t.TempDir()
	if code, _, errs := runCLI("run", "../../samples/boletos/boletos.yaml", "--runs-dir", runs, "--quiet"); code != exitOK {
		t.Fatalf("run: %d %s", code, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "2*"))
	if len(dirs) != 1 {
		t.Fatalf("run folders: %v", dirs)
	}
	dir := dirs[0]
	code, out, errs := runCLI("status", dir)
	if code != exitOK || !strings.Contains(out, "recebidas") || !strings.Contains(out, "a vencer") {
		t.Fatalf("status: %d %q %q", code, out, errs)
	}
	rn := sandboxtest.Start(t, sandbox.Config{DataDir: filepath.Join(runs, ".sandbox"), ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	paid := res.Rows[0].AmountCents + 123
	if _, err := (&control.Client{BaseURL: rn.URL}).PayCharge(context.Background(), res.Rows[0].ChargeIDs[0], control.PayRequest{Value: &paid}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI("status", dir, "--base-url", rn.URL, "--format", "json")
	if code != exitOK {
		t.Fatalf("status --base-url: %d %s", code, errs)
	}
	var sum status.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("json: %v %q", err, out)
	}
	if sum.Received.Count != 1 || sum.Received.Cents != paid || sum.Changed != 1 {
		t.Fatalf("after one payment of %d: %+v", paid, sum)
	}
	for _, f := range []string{"conciliacao.xlsx", "conciliacao.csv", "conciliacao.html", "conciliacao.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("status did not write %s: %v", f, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "conciliacao.html"))
	if !strings.Contains(string(html), "Totais conferem ao centavo") {
		t.Errorf("conciliacao.html does not say the totals reconcile")
	}
	if code, _, errs := runCLI("status", t.TempDir()); code != exitUsage || !strings.Contains(errs, "não é a pasta de uma execução") {
		t.Fatalf("status of a folder that is no run: %d %q", code, errs)
	}
	if code, _, _ := runCLI("status", dir, "--watch", "10ms"); code != exitUsage {
		t.Fatalf("a watch under a second should be refused: %d", code)
	}
}
