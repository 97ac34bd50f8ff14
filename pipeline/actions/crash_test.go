package actions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/actions"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/rules"
)

// The crash test builds the real binary, runs `remessa sandbox` as its own
// process with 10 % of each fault (500, 503, 429, connections dropped after
// processing), issues the school's carnets on it, then runs five action
// jobs that SIGKILL themselves at chosen points (REMESSA_CRASH_AT), resumes
// each to its end, and checks in the sandbox that every action was applied
// exactly once.

const (
	crashID     = "Client_Id_acoes"
	crashSecret = "Client_Secret_acoes"
)

// TestMain starts building the binary at once, so the build overlaps the
// package's other tests instead of delaying the crash test.
func TestMain(m *testing.M) {
	flag.Parse()
	if run := flag.Lookup("test.run").Value.String(); !testing.Short() && (run == "" || strings.Contains(run, "Crash")) {
		runtest.BuildAhead()
	}
	code := m.Run()
	escola.Remove()
	boletos.Remove()
	runtest.RemoveBinary()
	os.Exit(code)
}

func binary(t testing.TB) string { return runtest.Binary(t) }

func runBin(t testing.TB, env []string, args ...string) (int, string) {
	t.Helper()
	return runtest.Exec(t, append([]string{"REMESSA_CLIENT_ID=" + crashID, "REMESSA_CLIENT_SECRET=" + crashSecret}, env...), args...)
}

func startSandboxProc(t *testing.T, data string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(binary(t), "sandbox", "--addr", addr, "--data", data, "--client-id", crashID, "--client-secret", crashSecret, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	for i := 0; i < 200; i++ {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return "http://" + addr
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("sandbox did not listen on %s", addr)
	return ""
}

func setFaults(t *testing.T, base string, p float64) {
	body := fmt.Sprintf(`{"seed": 11, "all": {"error_500": %g, "error_503": %g, "error_429": %g, "drop": %g}}`, p, p, p, p)
	req, _ := http.NewRequest(http.MethodPut, base+"/sandbox/faults", bytes.NewReader([]byte(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /sandbox/faults: %v %v", err, resp)
	}
	resp.Body.Close()
}

// actionDir finds the action folder a job created under the run.
func actionDir(src, job string) string {
	ds, _ := filepath.Glob(filepath.Join(src, "acoes", "*", actions.MetaFile))
	for _, d := range ds {
		var m actions.Meta
		if b, err := os.ReadFile(d); err == nil && json.Unmarshal(b, &m) == nil && m.JobFile == job {
			return filepath.Dir(d)
		}
	}
	return ""
}

func historyCount(h []api.History, s string) int {
	n := 0
	for _, x := range h {
		if strings.Contains(x.Message, s) {
			n++
		}
	}
	return n
}

// TestCrashResumeFaults: five action jobs, killed at 15 points in all
// (after the journal is seeded, between intent and send, between send and
// journal, after the lookup, between journal and ledger, after the ledger),
// each resumed to its end under 10 % faults: each action applied exactly
// once.
func TestCrashResumeFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long crash test; skipped with -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range []string{"carnes.yaml", "alunos.xlsx"} {
		b, err := os.ReadFile(filepath.Join("../../samples/escola", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	base := startSandboxProc(t, filepath.Join(dir, "sb"))
	if code, out := runBin(t, nil, "run", filepath.Join(dir, "carnes.yaml"), "--service", "sandbox", "--base-url", base, "--quiet"); code != 0 {
		t.Fatalf("issue: %d\n%s", code, out)
	}
	srcs, _ := filepath.Glob(filepath.Join(dir, "remessa-out", "2*"))
	if len(srcs) != 1 {
		t.Fatalf("run folders: %v", srcs)
	}
	src := srcs[0]
	res, err := results.Load(filepath.Join(src, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	keys := func(from, to int) string {
		var ks []string
		for i := from; i < to; i++ {
			ks = append(ks, res.Rows[i].Key)
		}
		return strings.Join(ks, ", ")
	}
	chains := []struct {
		name, body string
		points     []string
	}{
		{"cancel-carnets", fmt.Sprintf("filter: {keys: [%s]}\naction:\n  cancel: {}\n", keys(0, 5)), []string{"acao-intent:2", "acao-sent:3", "acao-lookup:1"}},
		{"cancel-parcel", fmt.Sprintf("filter: {keys: [%s]}\naction:\n  cancel: {parcel: 12}\n", keys(5, 10)), []string{"acao-sent:1", "acao-intent:4", "acao-done:2"}},
		{"settle", fmt.Sprintf("filter: {keys: [%s], parcels: [1, 2]}\naction:\n  settle: {}\n", keys(10, 14)), []string{"acao-done:1", "acao-sent:5", "acao-ledger:1"}},
		{"due", fmt.Sprintf("filter: {keys: [%s], parcels: [10, 11]}\naction:\n  change_due_date: {days: 7}\n", keys(14, 19)), []string{"acao-seed:1", "acao-sent:2", "acao-intent:1"}},
		{"resend", fmt.Sprintf("filter: {keys: [%s]}\naction:\n  resend: {email: secretaria@example.com}\n", keys(19, 23)), []string{"acao-done:1", "acao-sent:2", "acao-ledger:1"}},
	}
	setFaults(t, base, 0.1)
	outcomes := make([]*actions.Outcome, len(chains))
	t.Run("chains", func(t *testing.T) {
		for ci, c := range chains {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				job := filepath.Join(dir, c.name+".yaml")
				os.WriteFile(job, []byte(fmt.Sprintf("version: 1\nname: %s\nfrom_run: %s\nconcurrency: 2\n%s", c.name, src, c.body)), 0o644)
				killed := 0
				adir := ""
				for _, p := range c.points {
					env := []string{"REMESSA_CRASH_AT=" + p}
					var code int
					var out string
					if adir == "" {
						// the plan (and its status sync) may fail under faults before the folder exists: run again
						for try := 0; try < 5 && adir == ""; try++ {
							code, out = runBin(t, env, "action", job, "run", "--base-url", base, "--quiet")
							adir = actionDir(src, job)
						}
						if adir == "" {
							t.Fatalf("no action folder: %d\n%s", code, out)
						}
					} else {
						code, out = runBin(t, env, "resume", adir, "--base-url", base, "--quiet")
					}
					if code == -int(syscall.SIGKILL) {
						killed++
					} else if code == 2 {
						t.Fatalf("%s at %s: %d\n%s", c.name, p, code, out)
					}
				}
				if killed == 0 {
					t.Errorf("%s: no kill point was reached", c.name)
				}
				for try := 0; ; try++ {
					code, out := runBin(t, nil, "resume", adir, "--base-url", base, "--quiet")
					if code == 0 || code == 1 {
						break
					}
					if try == 5 {
						t.Fatalf("%s: resume did not finish: %d\n%s", c.name, code, out)
					}
				}
				var o actions.Outcome
				b, err := os.ReadFile(filepath.Join(adir, "resultado.json"))
				if err != nil || json.Unmarshal(b, &o) != nil {
					t.Fatalf("resultado.json: %v", err)
				}
				outcomes[ci] = &o
				for _, it := range o.Items {
					if it.Reason != "" {
						t.Logf("%s %s: %s", c.name, it.RowKey, it.Reason)
					}
				}
				t.Logf("%s: %d kills; %d done, %d skipped, %d uncertain, %d failed, %d pending", c.name, killed, o.Done, o.Skipped, o.Uncertain, o.Failed, o.Pending)
			})
		}
	})
	setFaults(t, base, 0)
	cl, err := api.New(api.Config{BaseURL: base, ClientID: crashID, ClientSecret: crashSecret})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outcomes {
		if o == nil {
			t.Fatalf("chain %s did not finish", chains[i].name)
		}
		if i < 4 && (o.Done != len(o.Items) || o.Pending+o.Failed+o.Uncertain+o.Skipped > 0) {
			t.Errorf("%s: %d of %d items done (%d skipped, %d uncertain, %d failed, %d pending)", chains[i].name, o.Done, len(o.Items), o.Skipped, o.Uncertain, o.Failed, o.Pending)
		}
	}
	carnet := func(i int) *api.Carnet {
		cn, err := cl.GetCarnet(ctx, res.Rows[i].CarnetID)
		if err != nil {
			t.Fatal(err)
		}
		return cn
	}
	parcelHistory := func(id int64) []api.History {
		ch, err := cl.GetCharge(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ch.History
	}
	for i := 0; i < 5; i++ { // whole carnets cancelled once
		cn := carnet(i)
		if n := historyCount(cn.History, "Carnê cancelado"); n != 1 || cn.Status != "canceled" {
			t.Errorf("row %d: carnet %s, cancelled %d times", i, cn.Status, n)
		}
	}
	for i := 5; i < 10; i++ { // parcel 12 cancelled once
		cn := carnet(i)
		for k, p := range cn.Charges {
			want := "waiting"
			if k == 11 {
				want = "canceled"
				if n := historyCount(parcelHistory(p.ChargeID), "Parcela cancelada"); n != 1 {
					t.Errorf("row %d parcel 12 cancelled %d times", i, n)
				}
			}
			if p.Status != want {
				t.Errorf("row %d parcel %d: %s, want %s", i, k+1, p.Status, want)
			}
		}
	}
	for i := 10; i < 14; i++ { // parcels 1-2 settled once
		cn := carnet(i)
		for k := 0; k < 2; k++ {
			p := cn.Charges[k]
			if n := historyCount(parcelHistory(p.ChargeID), "paga manualmente"); p.Status != "settled" || n != 1 {
				t.Errorf("row %d parcel %d: %s, settled %d times", i, k+1, p.Status, n)
			}
		}
	}
	for i := 14; i < 19; i++ { // parcels 10-11 moved 7 days, once
		cn := carnet(i)
		for k := 9; k < 11; k++ {
			p := cn.Charges[k]
			d, _ := rules.ParseISODate(res.Rows[i].Parcels[k].DueDate)
			want := rules.FormatISODate(d.AddDate(0, 0, 7))
			if n := historyCount(parcelHistory(p.ChargeID), "Vencimento alterado"); p.ExpireAt != want || n != 1 {
				t.Errorf("row %d parcel %d: due %s (want %s), changed %d times", i, k+1, p.ExpireAt, want, n)
			}
		}
	}
	resent := outcomes[4]
	for k, it := range resent.Items { // resent at most once; exactly once when reported done
		n := historyCount(carnet(19+k).History, "reenviado")
		if n > 1 || (it.State == actions.StateDone && n != 1) {
			t.Errorf("row %d: resent %d times, reported %s", 19+k, n, it.State)
		}
	}
	// the ledger counts the effects
	l, err := status.OpenLedger(src)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cs, _ := l.Charges(ctx)
	var cancelled, settled, moved int
	for _, c := range cs {
		switch {
		case c.State == status.StateCancelled:
			cancelled++
		case c.State == status.StateSettled:
			settled++
		case c.RowIndex >= 14 && c.RowIndex < 19 && c.Parcel >= 10 && c.Parcel <= 11 && c.Due != res.Rows[c.RowIndex].Parcels[c.Parcel-1].DueDate:
			moved++
		}
	}
	if cancelled != 65 || settled != 8 || moved != 10 {
		t.Errorf("ledger: %d cancelled, %d settled, %d moved; want 65, 8, 10", cancelled, settled, moved)
	}
}
