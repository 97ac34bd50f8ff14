package listen_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/listen"
	"remessa/pipeline/run"
	"remessa/sandbox/control"
)

// TestListenerRecordsTheServiceTime: the sandbox's clock 23 days ahead of
// this machine; a slip paid there is notified, and the listener records
// the change in the run's ledger at the service's time, not this
// machine's; it warns (in English with Lang "en") that the two clocks
// differ.
func TestListenerRecordsTheServiceTime(t *testing.T) {
	ctx := context.Background()
	rn, ctl := startSandbox(t)
	jobDir := copyJob(t, "boletos", "boletos.yaml", "clientes.csv")
	runsDir := filepath.Join(jobDir, "out")
	os.MkdirAll(runsDir, 0o755)
	srv := serve(t, "", listen.Options{RunsDir: runsDir, Run: run.Options{Embedded: rn, Getenv: noEnv, Lang: "en"}})
	withLine(t, filepath.Join(jobDir, "boletos.yaml"), "custom_id:", `    notification_url: "`+srv.URL+`/notificacao"`)
	out, err := run.Run(ctx, filepath.Join(jobDir, "boletos.yaml"), run.Options{Embedded: rn, RunsDir: runsDir, Getenv: noEnv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v", err)
	}
	res, err := out.LoadResults()
	if err != nil {
		t.Fatal(err)
	}
	waitOutbox(t, ctl)
	if _, err := srv.L.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	ahead := 23 * 24 * time.Hour
	if _, err := ctl.Advance(ctx, control.AdvanceRequest{Duration: "23d"}); err != nil {
		t.Fatal(err)
	}
	id, v := res.Rows[0].ChargeIDs[0], res.Rows[0].AmountCents
	if _, err := ctl.PayCharge(ctx, id, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	waitOutbox(t, ctl)
	if _, err := srv.L.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range ledgerOf(t, out.Dir) {
		if c.ChargeID != id {
			continue
		}
		found = true
		at, err := time.Parse(time.RFC3339Nano, c.UpdatedAt)
		if c.State != "paid" || err != nil || at.Sub(time.Now().Add(ahead)).Abs() > time.Minute {
			t.Errorf("charge %d: %s, seen at %q; want paid, seen at the service's time (%s)", id, c.State, c.UpdatedAt, time.Now().Add(ahead).UTC().Format(time.RFC3339))
		}
	}
	if !found {
		t.Fatalf("charge %d is not in the ledger", id)
	}
	notes := srv.L.ClockNotes(ctx)
	if len(notes) != 1 {
		t.Fatalf("clock notes %v, want one for the embedded sandbox", notes)
	}
	for _, n := range notes {
		if !strings.Contains(n, "Warning: the service's clock (") || !strings.Contains(n, "23 days") || !strings.Contains(n, "ahead of this machine's") {
			t.Errorf("clock note %q", n)
		}
	}
}
