package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// TestRunResumeCommands runs the slip sample on the embedded service, runs
// it again (refused, saying what to do), and resumes the finished run
// (nothing to do, exit 0).
func TestRunResumeCommands(t *testing.T) {
	runs := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"run", "../../samples/boletos/boletos.yaml", "--runs-dir", runs, "--quiet"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, errb.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "2*"))
	if len(dirs) != 1 || !strings.Contains(out.String(), dirs[0]) {
		t.Fatalf("run folders %v; stdout %q", dirs, out.String())
	}
	out.Reset()
	errb.Reset()
	code = dispatch([]string{"run", "../../samples/boletos/boletos.yaml", "--runs-dir", runs}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "--again") || !strings.Contains(errb.String(), "Nada foi enviado") {
		t.Fatalf("second run: exit %d\n%s", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"resume", dirs[0], "--quiet"}, &out, &errb); code != exitOK {
		t.Fatalf("resume: exit %d\n%s", code, errb.String())
	}
	if code := dispatch([]string{"resume", runs}, &out, &errb); code != exitUsage {
		t.Fatalf("resume of a folder without a journal: exit %d", code)
	}
	if code := dispatch([]string{"run"}, &out, &errb); code != exitUsage {
		t.Fatalf("run without a job: exit %d", code)
	}
	errb.Reset()
	if code := dispatch([]string{"resume", dirs[0], "--log-format", "xml"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--log-format") {
		t.Fatalf("--log-format xml: exit %d\n%s", code, errb.String())
	}
	// --log-format json: stderr is JSON lines only
	errb.Reset()
	if code := dispatch([]string{"run", "../../samples/boletos/boletos.yaml", "--runs-dir", t.TempDir(), "--log-format", "json"}, &out, &errb); code != exitOK {
		t.Fatalf("run --log-format json: exit %d\n%s", code, errb.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("--log-format json wrote a line that is not JSON: %q", l)
		}
	}
}

// TestRunProductionAsksFirst: against production the run shows the plan and
// asks; anything but "sim" sends nothing (exit 2), "sim" issues every row.
// The "production" service here is a sandbox on loopback (--base-url).
// prodSandbox is a sandbox standing for production: its credentials in
// the environment (as a production job reads them) and a client on it.
func prodSandbox(t *testing.T) (*sandbox.Running, *api.Client) {
	t.Helper()
	rn := sandboxtest.Start(t, sandbox.Config{Addr: "127.0.0.1:0", ClientID: "Client_Id_prod", ClientSecret: "Client_Secret_prod"})
	t.Setenv("REMESSA_CLIENT_ID", "Client_Id_prod")
	t.Setenv("REMESSA_CLIENT_SECRET", "Client_Secret_prod")
	cl, err := api.New(api.Config{BaseURL: rn.URL, ClientID: "Client_Id_prod", ClientSecret: "Client_Secret_prod"})
	if err != nil {
		t.Fatal(err)
	}
	return rn, cl
}

func TestRunProductionAsksFirst(t *testing.T) {
	rn, cl := prodSandbox(t)
	slips := func() int {
		t.Helper()
		day := func(d int) string { return time.Now().AddDate(0, 0, d).Format("2006-01-02") }
		list, err := cl.ListCharges(context.Background(), api.ChargeListQuery{ChargeType: "billet", BeginDate: day(-1), EndDate: day(1), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Data)
	}
	defer func(r io.Reader) { stdin = r }(stdin)
	runs := t.TempDir()
	args := []string{"run", "../../samples/boletos/boletos.yaml", "--service", "production", "--base-url", rn.URL, "--runs-dir", runs, "--quiet"}

	var out, errb bytes.Buffer
	stdin = strings.NewReader("não\n")
	if code := dispatch(args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "PRODUÇÃO") ||
		!strings.Contains(errb.String(), "25 boletos") || !strings.Contains(errb.String(), "nada foi enviado") {
		t.Fatalf("answered não: exit %d\n%s", code, errb.String())
	}
	if n := slips(); n != 0 {
		t.Fatalf("answered não, yet the service has %d slips", n)
	}
	errb.Reset()
	stdin = strings.NewReader("sim\n")
	if code := dispatch(args, &out, &errb); code != exitOK {
		t.Fatalf("answered sim: exit %d\n%s", code, errb.String())
	}
	if n := slips(); n != 25 {
		t.Fatalf("answered sim: the service has %d slips, want 25", n)
	}
}
