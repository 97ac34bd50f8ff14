package run_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"remessa/pipeline/journal"
	"remessa/pipeline/run"
)

// TestSharedEmbedded: a cobv job (with a Pix key and a split account to
// register) and a boletos job run at the same time on one embedded
// sandbox from StartEmbedded; both complete, their charges are there
// through that sandbox afterwards (it is still up), and the runs recorded
// its folder as theirs.
func TestSharedEmbedded(t *testing.T) {
	sbDir := t.TempDir()
	rn, err := run.StartEmbedded(sbDir)
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	dirA, dirB := t.TempDir(), t.TempDir()
	psA := payersOn(14, 61, "financeiro@compartilhado.example.com")
	jobA := writeJob(t, dirA, "cobv", psA, "")
	addPixSplit(t, jobA, `
divisao_tarifa: assumir_total
minha_parte: {tipo: porcentagem, valor: 80%}
repasses:
  - {tipo: porcentagem, valor: 20%, cpf: "52998224725", conta: "7654322"}`)
	psB := payers(9, 62)
	jobB := writeJob(t, dirB, "boletos", psB, "")

	var wg sync.WaitGroup
	outs := make([]*run.Outcome, 2)
	errs := make([]error, 2)
	for i, job := range []string{jobA, jobB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = run.Run(context.Background(), job, run.Options{Embedded: rn})
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil || outs[i].ExitCode() != 0 {
			t.Fatalf("run %d: %v (outcome %+v)", i, errs[i], outs[i])
		}
	}
	cl := client(t, rn, run.EmbeddedClientID, run.EmbeddedClientSecret)
	ctx := context.Background()
	resA := loadResults(t, outs[0].Dir)
	for i, p := range psA {
		cob, err := cl.GetCobV(ctx, resA.Rows[i].Txid)
		if err != nil {
			t.Fatalf("cobv row %s: %v", p.Key, err)
		}
		if cob.Chave != p.Chave || cob.Devedor == nil || cob.Devedor.CPF != p.CPF {
			t.Errorf("cobv row %s: chave %s devedor %+v", p.Key, cob.Chave, cob.Devedor)
		}
	}
	byCID := map[string]bool{}
	for _, c := range listCharges(t, cl, "billet") {
		byCID[*c.CustomID] = true
	}
	for _, p := range psB {
		if !byCID[run.CustomID(outs[1].RunID, p.Key)] {
			t.Errorf("boleto row %s: not in the shared sandbox", p.Key)
		}
	}
	if len(byCID) != len(psB) {
		t.Errorf("%d slips in the shared sandbox, want %d", len(byCID), len(psB))
	}
	for i, o := range outs {
		j, err := journal.Open(filepath.Join(o.Dir, journal.FileName))
		if err != nil {
			t.Fatal(err)
		}
		metas, err := j.Meta(ctx)
		j.Close()
		if err != nil {
			t.Fatal(err)
		}
		var m run.Meta
		if err := json.Unmarshal([]byte(metas["meta"]), &m); err != nil {
			t.Fatal(err)
		}
		if m.SandboxDir != rn.DataDir || m.Account != rn.PayeeCode {
			t.Errorf("run %d: sandbox folder %q account %q, want %q %q", i, m.SandboxDir, m.Account, rn.DataDir, rn.PayeeCode)
		}
	}
	// the runs did not start sandboxes of their own in <runs>/.sandbox
	for _, d := range []string{dirA, dirB} {
		if m, _ := filepath.Glob(filepath.Join(d, "remessa-out", ".sandbox", "*")); len(m) != 0 {
			t.Errorf("a run started its own sandbox: %v", m)
		}
	}
}
