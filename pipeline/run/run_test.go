package run_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/rules"
	"remessa/sandbox"
)

// TestCarnetsEmbedded runs a carnet job on the embedded sandbox, then opens
// the sandbox's data folder again (what `remessa sandbox --data` does) and
// checks one carnet per row with the input's values and due dates.
func TestCarnetsEmbedded(t *testing.T) {
	dir := t.TempDir()
	ps := payers(7, 1)
	job := writeJob(t, dir, "carnets", ps, "")
	out, err := run.Run(context.Background(), job, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode() != 0 {
		t.Fatalf("exit %d, stop %v", out.ExitCode(), out.Stop)
	}
	res := loadResults(t, out.Dir)
	if res.Totals.Issued.Rows != len(ps) {
		t.Fatalf("issued %d rows, want %d", res.Totals.Issued.Rows, len(ps))
	}
	// the embedded sandbox's data outlives the run
	rn := startSandbox(t, filepath.Join(dir, "remessa-out", ".sandbox"), func(c *sandbox.Config) {
		c.ClientID, c.ClientSecret = run.EmbeddedClientID, run.EmbeddedClientSecret
	})
	cl := client(t, rn, run.EmbeddedClientID, run.EmbeddedClientSecret)
	charges := listCharges(t, cl, "carnet")
	if len(charges) != 3*len(ps) {
		t.Fatalf("sandbox has %d carnet parcels, want %d", len(charges), 3*len(ps))
	}
	first := today().AddDate(0, 0, 20)
	byCID := map[string][]listed{}
	for _, c := range charges {
		byCID[*c.CustomID] = append(byCID[*c.CustomID], c)
	}
	for i, p := range ps {
		cid := run.CustomID(out.RunID, p.Key)
		got := byCID[cid]
		if len(got) != 3 {
			t.Fatalf("row %s: %d parcels with custom_id %s, want 3", p.Key, len(got), cid)
		}
		carnet := got[0].Payment.Carnet.CarnetID
		due := map[string]bool{}
		for _, c := range got {
			if c.Total != p.Cents {
				t.Errorf("row %s parcel total %d, want %d", p.Key, c.Total, p.Cents)
			}
			if c.Customer == nil || c.Customer.CPF != p.CPF {
				t.Errorf("row %s: customer %+v, want CPF %s", p.Key, c.Customer, p.CPF)
			}
			if c.Payment.Carnet.CarnetID != carnet {
				t.Errorf("row %s: parcels in two carnets", p.Key)
			}
			due[c.Payment.Carnet.ExpireAt] = true
		}
		for n := 0; n < 3; n++ {
			d := rules.AddMonthsClamped(first, n).Format("2006-01-02")
			if !due[d] {
				t.Errorf("row %s: no parcel due %s (have %v)", p.Key, d, due)
			}
		}
		row := res.Rows[i]
		if row.CarnetID != carnet || len(row.Parcels) != 3 || row.Parcels[0].TypedLine == "" || row.Parcels[0].PixCopiaECola == "" {
			t.Errorf("results row %s: carnet %d parcels %d: %+v", p.Key, row.CarnetID, len(row.Parcels), row.Parcels)
		}
		if row.AmountCents != 3*p.Cents {
			t.Errorf("results row %s amount %d, want %d", p.Key, row.AmountCents, 3*p.Cents)
		}
	}
}

// TestBoletosRemoteAndDuplicate runs a slip job against a separate sandbox
// (--base-url), checks one slip per row, then checks the duplicate-run
// guard and --again.
func TestBoletosRemoteAndDuplicate(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payers(6, 2)
	job := writeJob(t, dir, "boletos", ps, "service: sandbox")
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv}
	out, err := run.Run(context.Background(), job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode() != 0 {
		t.Fatalf("exit %d, stop %v", out.ExitCode(), out.Stop)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	charges := listCharges(t, cl, "billet")
	if len(charges) != len(ps) {
		t.Fatalf("sandbox has %d slips, want %d", len(charges), len(ps))
	}
	want := today().AddDate(0, 0, 15).Format("2006-01-02")
	seen := map[string]listed{}
	for _, c := range charges {
		seen[*c.CustomID] = c
	}
	res := loadResults(t, out.Dir)
	for i, p := range ps {
		c, ok := seen[run.CustomID(out.RunID, p.Key)]
		if !ok {
			t.Fatalf("row %s: no slip", p.Key)
		}
		if c.Total != p.Cents || c.Payment.BankingBillet.ExpireAt != want || c.Customer.CPF != p.CPF {
			t.Errorf("row %s: total %d due %s cpf %s; want %d %s %s", p.Key, c.Total, c.Payment.BankingBillet.ExpireAt, c.Customer.CPF, p.Cents, want, p.CPF)
		}
		r := res.Rows[i]
		if r.Outcome != results.Issued || len(r.ChargeIDs) != 1 || r.ChargeIDs[0] != c.ID || len(r.Barcode) != 44 || r.TypedLine == "" {
			t.Errorf("results row %s: %+v", p.Key, r)
		}
		if err := rules.CheckBarcode(r.Barcode); err != nil {
			t.Errorf("row %s barcode: %v", p.Key, err)
		}
	}
	// the same job on the same input again is refused, naming the run
	_, err = run.Run(context.Background(), job, opts)
	var de *run.DuplicateError
	if !errors.As(err, &de) || de.Earlier.RunID != out.RunID || !strings.Contains(err.Error(), "--again") {
		t.Fatalf("second run: %v, want a DuplicateError naming %s", err, out.RunID)
	}
	if n := len(listCharges(t, cl, "billet")); n != len(ps) {
		t.Fatalf("after the refused run the sandbox has %d slips", n)
	}
	// --again issues again, and warns about the repeated rows
	opts.Again = true
	out2, err := run.Run(context.Background(), job, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(out2.Warnings) == 0 || !strings.Contains(out2.Warnings[0], out.RunID) {
		t.Errorf("no repeated-rows warning naming %s: %v", out.RunID, out2.Warnings)
	}
	if n := len(listCharges(t, cl, "billet")); n != 2*len(ps) {
		t.Fatalf("after --again the sandbox has %d slips, want %d", n, 2*len(ps))
	}
}

// TestCobvDeniedAndSplit sends cobv in batches of 10 to a separate
// sandbox: one row's key does not belong to the account (NEGADA), the
// others are created with their values and due dates and linked to the
// split configuration.
func TestCobvDeniedAndSplit(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ctx := context.Background()
	a1, err := rn.Server.Auth().CreateAccount(ctx, "Federação Um")
	if err != nil {
		t.Fatal(err)
	}
	ps := payersOn(23, 3, rn.PixKey)
	bad := 13
	ps[bad].Chave = "alguem@nao-e-minha.example.com"
	split := `    split:
      divisao_tarifa: assumir_total
      minha_parte: {tipo: porcentagem, valor: 70%}
      repasses:
        - {tipo: porcentagem, valor: 30%, cnpj: "` + a1.CNPJ + `", conta: "` + a1.Conta + `"}`
	job := writeJob(t, dir, "cobv", ps, "service: sandbox")
	b, _ := readFile(job)
	job = writeFileT(t, job, strings.Replace(b, "    batch: {size: 10}", "    batch: {size: 10}\n"+split, 1))
	out, err := run.Run(ctx, job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if out.ExitCode() != 1 || res.Totals.Denied.Rows != 1 || res.Totals.Issued.Rows != len(ps)-1 || !res.Run.Complete {
		t.Fatalf("exit %d, totals %+v, stop %v", out.ExitCode(), res.Totals, out.Stop)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	want := today().AddDate(0, 0, 25).Format("2006-01-02")
	batches := map[string]bool{}
	for i, p := range ps {
		r := res.Rows[i]
		batches[r.BatchID] = true
		cob, err := cl.GetCobV(ctx, r.Txid)
		if i == bad {
			var ae *api.Error
			if r.Outcome != results.Denied || len(r.Problems) == 0 || !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
				t.Errorf("denied row: outcome %s problems %v, GET err %v", r.Outcome, r.Problems, err)
			}
			if !strings.Contains(r.Problems[0].Message, "chave") {
				t.Errorf("denied row problem does not name the key: %+v", r.Problems[0])
			}
			continue
		}
		if err != nil {
			t.Fatalf("row %s: %v", p.Key, err)
		}
		cents, _ := rules.ParsePixAmount(cob.Valor.Original)
		if cents != p.Cents || cob.Calendario.DataDeVencimento != want || cob.Devedor == nil || cob.Devedor.CPF != p.CPF {
			t.Errorf("row %s: valor %s due %s devedor %+v", p.Key, cob.Valor.Original, cob.Calendario.DataDeVencimento, cob.Devedor)
		}
		if r.Txid != rules.RunTxid(out.RunID, i) || r.PixCopiaECola != cob.PixCopiaECola || r.PixCopiaECola == "" || r.Location == "" {
			t.Errorf("results row %s: txid %s copia %q location %q", p.Key, r.Txid, r.PixCopiaECola, r.Location)
		}
		sp, err := cl.GetCobSplit(ctx, true, r.Txid)
		if err != nil {
			t.Fatalf("row %s split: %v", p.Key, err)
		}
		if sp.Config.ID == "" || !strings.HasPrefix(sp.Config.ID, "rm") {
			t.Errorf("row %s: split config %+v", p.Key, sp.Config)
		}
		for _, pr := range r.Problems {
			t.Errorf("issued row %s has problem %+v", p.Key, pr)
		}
	}
	if len(batches) != 3 {
		t.Errorf("%d batches, want 3 (23 rows, 10 per batch)", len(batches))
	}
}

// TestCobvSplitRefused: when the service refuses the split configuration,
// its rows are denied with the reason and no charge is created.
func TestCobvSplitRefused(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payersOn(4, 9, rn.PixKey)
	job := writeJob(t, dir, "cobv", ps, "service: sandbox")
	addPixSplit(t, job, `
minha_parte: {tipo: porcentagem, valor: 50%}
repasses:
  - {tipo: porcentagem, valor: 50%, cpf: "52998224725", conta: "9999999"}`)
	out, err := run.Run(context.Background(), job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if out.ExitCode() != 1 || res.Totals.Denied.Rows != len(ps) || !res.Run.Complete {
		t.Fatalf("exit %d totals %+v", out.ExitCode(), res.Totals)
	}
	if p := res.Rows[0].Problems; len(p) != 1 || !strings.Contains(p[0].Message, "9999999") && !strings.Contains(p[0].Message, "conta") {
		t.Errorf("problem does not say why: %+v", p)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	if _, err := cl.GetCobV(context.Background(), res.Rows[0].Txid); err == nil {
		t.Error("a charge was created for a row whose split was refused")
	}
}

// TestMonthlyJobNotDuplicate: the same job and input with relative due
// dates, run a month later, is a new run (its due dates differ).
func TestMonthlyJobNotDuplicate(t *testing.T) {
	dir := t.TempDir()
	ps := payers(3, 11)
	job := writeJob(t, dir, "boletos", ps, "")
	now := time.Now()
	if _, err := run.Run(context.Background(), job, run.Options{Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	_, err := run.Run(context.Background(), job, run.Options{Now: func() time.Time { return now }})
	var de *run.DuplicateError
	if !errors.As(err, &de) {
		t.Fatalf("same day: %v, want DuplicateError", err)
	}
	out, err := run.Run(context.Background(), job, run.Options{Now: func() time.Time { return now.AddDate(0, 1, 0) }})
	if err != nil {
		t.Fatalf("a month later: %v", err)
	}
	if out.ExitCode() != 0 {
		t.Fatalf("a month later: exit %d", out.ExitCode())
	}
}

// TestFixedRowsNoWarning: rows the service denied, fixed and sent again
// in a new input, are not flagged as repeated; rows that were issued are.
func TestFixedRowsNoWarning(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	ps := payersOn(4, 13, rn.PixKey)
	ps[1].Chave = "outra@nao-e-minha.example.com" // NEGADA
	job := writeJob(t, dir, "cobv", ps, "service: sandbox")
	opts := run.Options{BaseURL: rn.URL, Getenv: remoteEnv}
	out, err := run.Run(context.Background(), job, opts)
	if err != nil || out.Results.Totals.Denied.Rows != 1 {
		t.Fatalf("first run: %v %+v", err, out.Results.Totals)
	}
	// the fixed row alone: no warning
	fixed := []payer{ps[1]}
	fixed[0].Chave = rn.PixKey
	job = writeJob(t, dir, "cobv", fixed, "service: sandbox")
	out2, err := run.Run(context.Background(), job, opts)
	if err != nil || out2.ExitCode() != 0 {
		t.Fatalf("fixed row: %v", err)
	}
	if len(out2.Warnings) != 0 {
		t.Errorf("a denied row sent again was flagged: %v", out2.Warnings)
	}
	// an issued row in another input: flagged
	job = writeJob(t, dir, "cobv", []payer{ps[0], ps[2]}, "service: sandbox\nconcurrency: 2")
	out3, err := run.Run(context.Background(), job, opts)
	if err != nil {
		t.Fatal(err)
	}
	// the examples name the rows (found by validating the input again:
	// the run keeps only their hashes)
	if len(out3.Warnings) != 1 || !strings.Contains(out3.Warnings[0], "2 linha(s)") ||
		!strings.Contains(out3.Warnings[0], "ex.: "+ps[0].Key+" vencimento ") || !strings.Contains(out3.Warnings[0], "; "+ps[2].Key+" vencimento ") {
		t.Errorf("repeated issued rows not flagged: %v", out3.Warnings)
	}
}

// TestCobvSplitConfigTransient: the service answers the split
// configuration's PUT with 503 six times in a row (more than the client's
// own retries). The run repeats the PUT (it has an id) instead of taking
// the 503 for a refusal: every row is issued and linked, none denied.
func TestCobvSplitConfigTransient(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, nil)
	a1, err := rn.Server.Auth().CreateAccount(context.Background(), "Federação")
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(rn.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	var failed atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/v2/gn/split/config/") && failed.Add(1) <= 6 {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"type":"https://pix.bcb.gov.br/api/v2/error/ServicoIndisponivel","title":"Serviço Indisponível","status":503}`)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	ps := payersOn(5, 34, rn.PixKey)
	job := writeJob(t, dir, "cobv", ps, "service: sandbox")
	addPixSplit(t, job, `
minha_parte: {tipo: porcentagem, valor: 90%}
repasses:
  - {tipo: porcentagem, valor: 10%, cnpj: "`+a1.CNPJ+`", conta: "`+a1.Conta+`"}`)
	out, err := run.Run(context.Background(), job, run.Options{BaseURL: proxy.URL, Getenv: remoteEnv})
	if err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, out.Dir)
	if out.ExitCode() != 0 || res.Totals.Issued.Rows != len(ps) || res.Totals.Denied.Rows != 0 {
		t.Fatalf("exit %d totals %+v stop %v; row 0 problems %+v", out.ExitCode(), res.Totals, out.Stop, res.Rows[0].Problems)
	}
	if n := failed.Load(); n <= 6 {
		t.Fatalf("the split configuration was sent %d times; the 503s were not outlasted", n)
	}
	cl := client(t, rn, testClientID, testClientSecret)
	for _, r := range res.Rows {
		if sp, err := cl.GetCobSplit(context.Background(), true, r.Txid); err != nil || sp.Config.ID == "" {
			t.Errorf("row %s: split link %v %+v", r.Key, err, sp)
		}
	}
}
