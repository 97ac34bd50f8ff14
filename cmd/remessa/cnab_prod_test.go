package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/cnabtest"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
)

// TestCNABMovementsAskInProduction: in production, a CNAB remessa's
// movements are shown with the entries before the one question, and a
// "não" leaves every charge as it was; "sim" applies them. (The movements
// run after the issuance without asking again, so the question is their
// only confirmation.)
func TestCNABMovementsAskInProduction(t *testing.T) {
	rn, cl := prodSandbox(t)
	defer func(r io.Reader) { stdin = r }(stdin)
	work := t.TempDir()
	runs := filepath.Join(work, "out")
	write := func(name, body string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(job, answer string, want int) (string, string) {
		t.Helper()
		stdin = strings.NewReader(answer + "\n")
		var out, errb bytes.Buffer
		args := []string{"run", job, "--service", "production", "--base-url", rn.URL, "--runs-dir", runs, "--quiet"}
		if code := dispatch(args, &out, &errb); code != want {
			t.Fatalf("run %s answering %q: exit %d, want %d\n%s\n%s", filepath.Base(job), answer, code, want, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}

	var ts []cnabtest.Title240
	for i := 1; i <= 3; i++ {
		tt := cnabtest.OkTitle(fmt.Sprintf("P%02d", i), 10_000*int64(i))
		tt.Doc = runtest.CPF(fmt.Sprintf("%09d", 200000000+i*7919))
		ts = append(ts, tt)
	}
	write("PROD1.REM", cnabtest.File240(1, ts, "\r\n"))
	out, _ := run(write("prod1.yaml", "version: 1\nname: Remessa produção\ninput: {file: PROD1.REM}\n"), "sim", exitOK)
	m := runDirRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no run folder in %q", out)
	}
	res, err := results.Load(filepath.Join(m[1], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, r := range res.Rows {
		if len(r.ChargeIDs) == 1 {
			ids[r.Key] = r.ChargeIDs[0]
		}
	}
	if len(ids) != 3 {
		t.Fatalf("issued %v, want P01–P03", ids)
	}
	status := func(k string) string {
		t.Helper()
		c, err := cl.GetCharge(context.Background(), ids[k])
		if err != nil {
			t.Fatal(err)
		}
		return c.Status
	}

	// the second remessa cancels P02 (02)
	c := cnabtest.OkTitle("P02", 20_000)
	c.Doc, c.Mov = ts[1].Doc, 2
	write("PROD2.REM", cnabtest.File240(2, []cnabtest.Title240{c}, "\r\n"))
	job2 := write("prod2.yaml", "version: 1\nname: Baixas\ninput: {file: PROD2.REM}\n")
	_, errs := run(job2, "não", exitUsage)
	for _, w := range []string{"Movimentos do arquivo", "02 ", "P02 (R$ 200,00) → cancelar", "aplicar estes movimentos em PRODUÇÃO", "nada foi enviado"} {
		if !strings.Contains(errs, w) {
			t.Errorf("the question does not show %q:\n%s", w, errs)
		}
	}
	if s := status("P02"); s == "canceled" {
		t.Fatalf("answered não, yet P02 is %s", s)
	}
	run(job2, "sim", exitOK)
	if s := status("P02"); s != "canceled" {
		t.Errorf("answered sim: P02 is %q, want canceled", s)
	}
	if s := status("P01"); s == "canceled" {
		t.Errorf("P01 was not in the file, yet it is %s", s)
	}
}
