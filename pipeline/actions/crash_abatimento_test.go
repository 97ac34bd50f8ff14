package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"remessa/api"
	"remessa/pipeline/actions"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
)

// TestCrashAbatimento: six cobv of R$ 100,00 on `remessa sandbox` under
// 10 % faults; an abatimento job of R$ 7,50 killed between intent and
// send, between send and journal, and after the lookup, then resumed to
// its end: every cobv has the abatimento, was revised once (revisao 1: no
// PATCH sent twice), and the ledger holds one change each.
func TestCrashAbatimento(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("long crash test; skipped with -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("Código;Nome;CPF;Valor\n")
	for i := range 6 {
		fmt.Fprintf(&csv, "R%d;Pagador %d;%s;100,00\n", i, i, runtest.CPF(fmt.Sprintf("%09d", 200000000+i*7919)))
	}
	base := startSandboxProc(t, filepath.Join(dir, "sb"))
	cl, err := api.New(api.Config{BaseURL: base, ClientID: crashID, ClientSecret: crashSecret})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cl.ListEVP(ctx) // the sandbox's own random key: the cobv are issued to it
	if err != nil || len(keys) == 0 {
		t.Fatalf("the sandbox's Pix keys: %v %v", keys, err)
	}
	os.WriteFile(filepath.Join(dir, "pix.csv"), []byte(csv.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "cobv.yaml"), []byte("version: 1\nname: Pix\ninput: {file: pix.csv, key: Código}\n"+
		"issue:\n  cobv:\n    due: +20d\n    chave: "+keys[0]+"\n"), 0o644)
	if code, out := runBin(t, nil, "run", filepath.Join(dir, "cobv.yaml"), "--service", "sandbox", "--base-url", base, "--quiet"); code != 0 {
		t.Fatalf("issue: %d\n%s", code, out)
	}
	srcs, _ := filepath.Glob(filepath.Join(dir, "remessa-out", "2*"))
	if len(srcs) != 1 {
		t.Fatalf("run folders: %v", srcs)
	}
	src := srcs[0]
	res, err := results.Load(filepath.Join(src, "results.json"))
	if err != nil || len(res.Rows) != 6 {
		t.Fatalf("results: %v", err)
	}
	job := filepath.Join(dir, "abatimento.yaml")
	os.WriteFile(job, []byte(fmt.Sprintf("version: 1\nname: abatimento\nfrom_run: %s\nconcurrency: 2\naction:\n  abatimento: {cents: 750}\n", src)), 0o644)
	setFaults(t, base, 0.1)
	killed, adir := 0, ""
	for _, p := range []string{"acao-intent:2", "acao-sent:2", "acao-lookup:1"} {
		env := []string{"REMESSA_CRASH_AT=" + p}
		var code int
		var out string
		if adir == "" {
			for try := 0; try < 5 && adir == ""; try++ { // the plan's sync may fail under faults
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
			t.Fatalf("at %s: %d\n%s", p, code, out)
		}
	}
	if killed == 0 {
		t.Error("no kill point was reached")
	}
	for try := 0; ; try++ {
		code, out := runBin(t, nil, "resume", adir, "--base-url", base, "--quiet")
		if code == 0 || code == 1 {
			break
		}
		if try == 5 {
			t.Fatalf("resume did not finish: %d\n%s", code, out)
		}
	}
	setFaults(t, base, 0)
	var o actions.Outcome
	b, err := os.ReadFile(filepath.Join(adir, "resultado.json"))
	if err != nil || json.Unmarshal(b, &o) != nil {
		t.Fatalf("resultado.json: %v", err)
	}
	if o.Done != 6 || len(o.Items) != 6 {
		t.Errorf("%d of %d items done (%d skipped, %d uncertain, %d failed, %d pending)", o.Done, len(o.Items), o.Skipped, o.Uncertain, o.Failed, o.Pending)
	}
	for _, r := range res.Rows {
		cb, err := cl.GetCobV(ctx, r.Txid)
		if err != nil {
			t.Fatal(err)
		}
		if a := cb.Valor.Abatimento; a == nil || a.ValorPerc != "7.50" || cb.Revisao != 1 {
			t.Errorf("%s: abatimento %+v, revisao %d; want 7.50 once (revisao 1)", r.Key, a, cb.Revisao)
		}
	}
	l, err := status.OpenLedger(src)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	evs, err := l.RebateEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		e := evs[status.KeyOfCobv(r.Txid)]
		if len(e) != 1 || e[0].Rebate != (status.Rebate{Before: 0, Cents: 750}) {
			t.Errorf("%s: ledger changes %+v, want one from 0 to 750", r.Key, e)
		}
	}
}
