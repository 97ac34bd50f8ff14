package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
)

// TestEmbeddedNotifiesTheLocalListener: on the embedded default a job
// that names no notification_url gets the local listener's, so `remessa
// listen` receives the sample's cycle offline; a job's own URL stays.
func TestEmbeddedNotifiesTheLocalListener(t *testing.T) {
	ctx := context.Background()
	is := runtest.Sample(t, "../../samples/boletos", "boletos.yaml", "clientes.csv")
	dir, rn, out := is.Work, is.Sandbox, is.Outcome
	cl := runtest.Client(t, rn)
	c, err := cl.GetCharge(ctx, out.Results.Rows[0].ChargeIDs[0])
	if err != nil {
		t.Fatal(err)
	}
	if c.NotificationURL == nil || *c.NotificationURL != run.LocalListenerURL {
		t.Fatalf("notification_url %v, want the local listener's %s", c.NotificationURL, run.LocalListenerURL)
	}
	// a job's own address is kept
	job, _ := os.ReadFile(filepath.Join(dir, "boletos.yaml"))
	own := strings.Replace(string(job), "    due: +15d\n", "    due: +15d\n    notification_url: https://financeiro.example.com/avisos\n", 1)
	os.WriteFile(filepath.Join(dir, "boletos.yaml"), []byte(own), 0o644)
	out, err = run.Run(ctx, filepath.Join(dir, "boletos.yaml"), run.Options{Embedded: rn, RunsDir: filepath.Join(dir, "out"), Again: true})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run with its own URL: %v", err)
	}
	res, err := out.LoadResults()
	if err != nil {
		t.Fatal(err)
	}
	if c, err = cl.GetCharge(ctx, res.Rows[0].ChargeIDs[0]); err != nil || c.NotificationURL == nil || *c.NotificationURL != "https://financeiro.example.com/avisos" {
		t.Fatalf("the job's own notification_url was not kept: %v %v", c.NotificationURL, err)
	}
}
