package run_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/rules"
	"remessa/sandbox"
)

// embeddedClient opens the data folder an embedded run left (what
// `remessa sandbox --data` does) and returns a client of it.
func embeddedClient(t *testing.T, jobDir string) *api.Client {
	t.Helper()
	rn := startSandbox(t, filepath.Join(jobDir, "remessa-out", ".sandbox"), func(c *sandbox.Config) {
		c.ClientID, c.ClientSecret = run.EmbeddedClientID, run.EmbeddedClientSecret
	})
	return client(t, rn, run.EmbeddedClientID, run.EmbeddedClientSecret)
}

// callCounts reads how many calls of each route a run journaled.
func callCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	j, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	cc, err := j.CallCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for route, by := range cc {
		for _, n := range by {
			out[route] += n
		}
	}
	return out
}

// TestBoletosEmbedded: one slip per row on the embedded sandbox, with the
// row's value, due date and payer, as the sandbox itself lists them.
func TestBoletosEmbedded(t *testing.T) {
	dir := t.TempDir()
	ps := payers(9, 31)
	job := writeJob(t, dir, "boletos", ps, "")
	out, err := run.Run(context.Background(), job, run.Options{})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v exit %d", err, out.ExitCode())
	}
	res := loadResults(t, out.Dir)
	cl := embeddedClient(t, dir)
	charges := listCharges(t, cl, "billet")
	if len(charges) != len(ps) {
		t.Fatalf("sandbox has %d slips, want %d", len(charges), len(ps))
	}
	byCID := map[string]listed{}
	for _, c := range charges {
		byCID[*c.CustomID] = c
	}
	want := today().AddDate(0, 0, 15).Format("2006-01-02")
	for i, p := range ps {
		c, ok := byCID[run.CustomID(out.RunID, p.Key)]
		if !ok {
			t.Fatalf("row %s: no slip", p.Key)
		}
		if c.Total != p.Cents || c.Payment.BankingBillet.ExpireAt != want || c.Customer.CPF != p.CPF {
			t.Errorf("row %s: total %d due %s cpf %s; want %d %s %s", p.Key, c.Total, c.Payment.BankingBillet.ExpireAt, c.Customer.CPF, p.Cents, want, p.CPF)
		}
		if r := res.Rows[i]; len(r.ChargeIDs) != 1 || r.ChargeIDs[0] != c.ID || r.AmountCents != p.Cents || r.DueDate != want {
			t.Errorf("results row %s: %+v", p.Key, r)
		}
	}
	if n := callCounts(t, out.Dir)[pipeline.RouteOneStep]; n != len(ps) {
		t.Errorf("%d one-step POSTs for %d rows", n, len(ps))
	}
}

// TestCobvEmbeddedSplit: 23 cobv with a Pix split on the embedded
// sandbox, in batches of 10. The sandbox holds one charge per row with its
// value, due date and payer, each linked to the split configuration the
// job describes (70% own, 30% to conta 7654321, created on the embedded
// sandbox for the run); the copy-and-paste codes came by page, one list
// call per batch, not one per charge.
func TestCobvEmbeddedSplit(t *testing.T) {
	dir := t.TempDir()
	ps := payersOn(23, 32, "financeiro@e2e.example.com")
	job := writeJob(t, dir, "cobv", ps, "")
	addPixSplit(t, job, `
divisao_tarifa: assumir_total
minha_parte: {tipo: porcentagem, valor: 70%}
repasses:
  - {tipo: porcentagem, valor: 30%, cpf: "52998224725", conta: "7654321"}`)
	out, err := run.Run(context.Background(), job, run.Options{})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v exit %d stop %v", err, out.ExitCode(), out.Stop)
	}
	res := loadResults(t, out.Dir)
	cl := embeddedClient(t, dir)
	ctx := context.Background()
	want := today().AddDate(0, 0, 25).Format("2006-01-02")
	configs := map[string]bool{}
	batches := map[string]bool{}
	for i, p := range ps {
		r := res.Rows[i]
		batches[r.BatchID] = true
		cob, err := cl.GetCobV(ctx, r.Txid)
		if err != nil {
			t.Fatalf("row %s: %v", p.Key, err)
		}
		cents, _ := rules.ParsePixAmount(cob.Valor.Original)
		if cents != p.Cents || cob.Calendario.DataDeVencimento != want || cob.Devedor == nil || cob.Devedor.CPF != p.CPF || cob.Chave != ps[i].Chave {
			t.Errorf("row %s: valor %s due %s devedor %+v chave %s", p.Key, cob.Valor.Original, cob.Calendario.DataDeVencimento, cob.Devedor, cob.Chave)
		}
		if r.Outcome != results.Issued || r.PixCopiaECola == "" || r.PixCopiaECola != cob.PixCopiaECola || r.Location == "" {
			t.Errorf("results row %s: %s copia %q location %q", p.Key, r.Outcome, r.PixCopiaECola, r.Location)
		}
		sp, err := cl.GetCobSplit(ctx, true, r.Txid)
		if err != nil {
			t.Fatalf("row %s split: %v", p.Key, err)
		}
		configs[sp.Config.ID] = true
	}
	if len(configs) != 1 {
		t.Fatalf("charges linked to %d split configurations, want 1: %v", len(configs), configs)
	}
	for id := range configs {
		cfg, err := cl.GetSplitConfig(ctx, id, -1)
		if err != nil {
			t.Fatal(err)
		}
		sp := cfg.Split
		if sp.DivisaoTarifa != "assumir_total" || sp.MinhaParte.Tipo != "porcentagem" || sp.MinhaParte.Valor != "70.00" || len(sp.Repasses) != 1 ||
			sp.Repasses[0].Valor != "30.00" || sp.Repasses[0].Favorecido.Conta != "7654321" || sp.Repasses[0].Favorecido.CPF != "52998224725" {
			t.Errorf("split configuration %s: %+v", id, sp)
		}
	}
	if len(batches) != 3 {
		t.Errorf("%d batches, want 3", len(batches))
	}
	cc := callCounts(t, out.Dir)
	for route, n := range map[string]int{pipeline.RouteLotePut: 3, pipeline.RouteCobvList: 3, pipeline.RouteSplitConfig: 1, pipeline.RouteSplitVinculo: len(ps)} {
		if cc[route] != n {
			t.Errorf("%s: %d calls, want %d (all: %v)", route, cc[route], n, cc)
		}
	}
}

// TestCobvStagesOverlap: batches take 300 ms to process. With two batches
// at a time, batch 2 goes out while batch 1 is still processing, and batch
// 1's split links start as soon as it is final, before the third batch
// is final (a run that waited for every batch before linking would not).
func TestCobvStagesOverlap(t *testing.T) {
	dir := t.TempDir()
	rn := startSandbox(t, sandbox.Memory, func(c *sandbox.Config) { c.BatchDelay = 300 * time.Millisecond })
	a1, err := rn.Server.Auth().CreateAccount(context.Background(), "Federação")
	if err != nil {
		t.Fatal(err)
	}
	ps := payersOn(25, 33, rn.PixKey)
	job := writeJob(t, dir, "cobv", ps, "service: sandbox\nconcurrency: 2")
	addPixSplit(t, job, `
minha_parte: {tipo: porcentagem, valor: 90%}
repasses:
  - {tipo: porcentagem, valor: 10%, cnpj: "`+a1.CNPJ+`", conta: "`+a1.Conta+`"}`)
	out, err := run.Run(context.Background(), job, run.Options{BaseURL: rn.URL, Getenv: remoteEnv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v exit %d stop %v", err, out.ExitCode(), out.Stop)
	}
	j, err := journal.Open(filepath.Join(out.Dir, journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	bs, _ := j.Batches(context.Background())
	calls, err := j.Calls(context.Background())
	if err != nil || len(bs) != 3 {
		t.Fatalf("%d batches, calls: %v", len(bs), err)
	}
	put := map[string]journal.Call{}
	final := map[string]journal.Call{} // the last poll of each batch (the one that found it final)
	polls := map[string]int{}
	var firstLink journal.Call
	for _, c := range calls {
		switch c.Route {
		case pipeline.RouteLotePut:
			put[c.Target] = c
		case pipeline.RouteLoteGet:
			final[c.Target] = c
			polls[c.Target]++
		case pipeline.RouteSplitVinculo:
			if firstLink.Seq == 0 {
				firstLink = c
			}
		}
	}
	b1, b2, b3 := bs[0].ID, bs[1].ID, bs[2].ID
	if polls[b1] < 2 {
		t.Errorf("batch 1 polled %d times: it was final at once, the test proves nothing", polls[b1])
	}
	if !put[b2].At.Before(final[b1].DoneAt) {
		t.Errorf("batch 2 sent at %v, after batch 1 was final (%v)", put[b2].At, final[b1].DoneAt)
	}
	if firstLink.Seq == 0 || !firstLink.At.Before(final[b3].DoneAt) {
		t.Errorf("first split link at %v, not before batch 3 was final (%v)", firstLink.At, final[b3].DoneAt)
	}
}
