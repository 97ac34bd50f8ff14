package run_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"remessa/internal/metrics"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// TestDeniedRowFixedAndRunAgain: a row the service denies (its Pix key is
// not the account's) goes to rejeitadas.csv in the input's own columns with
// the service's reason; fixed there and run as a new input, exactly that
// row is issued, and the service then holds one charge per payer.
func TestDeniedRowFixedAndRunAgain(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payersOn(5, 51, rn.PixKey)
	const foreign = "alguem@nao-e-minha.example.com"
	ps[2].Chave = foreign
	job := writeJob(t, dir, "cobv", ps, "service: sandbox")
	body, _ := readFile(job)
	writeFileT(t, job, strings.Replace(body, "  formats: [json]", "  formats: [json, csv]", 1))
	ctx := context.Background()
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv}
	issued, denied := rowsMetric(t, "issued"), rowsMetric(t, "denied")
	out, err := run.Run(ctx, job, opts)
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Denied.Rows != 1 || res.Totals.Issued.Rows != 4 || res.Rows[2].Outcome != results.Denied {
		t.Fatalf("first run: totals %+v, row 3 %s", res.Totals, res.Rows[2].Outcome)
	}
	// the process's metrics counted the rows as they became final (at
	// least: other tests of the package may run at the same time)
	if got := rowsMetric(t, "issued") - issued; got < 4 {
		t.Errorf("remessa_rows_total{kind=cobv,state=issued} moved by %v, want at least 4", got)
	}
	if got := rowsMetric(t, "denied") - denied; got < 1 {
		t.Errorf("remessa_rows_total{kind=cobv,state=denied} moved by %v, want at least 1", got)
	}
	rej, err := os.ReadFile(filepath.Join(out.Dir, "rejeitadas.csv"))
	if err != nil {
		t.Fatalf("no rejected rows: %v (reports %v)", err, out.Reports)
	}
	lines := strings.Split(strings.TrimSpace(string(rej)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "Código;Nome;CPF;Valor;Email;Telefone;Chave;Problema") ||
		!strings.HasPrefix(lines[1], ps[2].Key+";") || !strings.Contains(lines[1], foreign) {
		t.Fatalf("rejeitadas.csv:\n%s", rej)
	}

	// fixed in the rejected file itself, which becomes the next input
	fixed := filepath.Join(dir, "corrigidas.csv")
	writeFileT(t, fixed, strings.Replace(string(rej), foreign, rn.PixKey, 1))
	body, _ = readFile(job)
	job2 := writeFileT(t, filepath.Join(dir, "job2.yaml"), strings.Replace(body, "file: pagadores.csv", "file: corrigidas.csv", 1))
	out2, err := run.Run(ctx, job2, opts)
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("second run: %v exit %d", err, out2.ExitCode())
	}
	res2 := loadResults(t, out2.Dir)
	if len(res2.Rows) != 1 || res2.Rows[0].Key != ps[2].Key || res2.Rows[0].Outcome != results.Issued || res2.Rows[0].AmountCents != ps[2].Cents {
		t.Fatalf("second run rows: %+v", res2.Rows)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	for i, p := range ps {
		r := res.Rows[i]
		if i == 2 {
			r = res2.Rows[0]
		}
		cob, err := cl.GetCobV(ctx, r.Txid)
		if err != nil || cob.Devedor == nil || cob.Devedor.CPF != p.CPF {
			t.Errorf("payer %s: cobv %s: %v %+v", p.Key, r.Txid, err, cob)
		}
	}
}

// rowsMetric is remessa_rows_total{kind="cobv",state=state} as this
// process's /metrics shows it.
func rowsMetric(t *testing.T, state string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	want := `remessa_rows_total{kind="cobv",state="` + state + `"} `
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, want); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}
