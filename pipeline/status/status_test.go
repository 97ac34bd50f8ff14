package status_test

import (
	"context"
	"os"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/rules"
	"remessa/sandbox"
	"remessa/sandbox/control"
)

// The runs the tests share, issued once per test binary: the school's
// carnets (40 × 12) and a 30-row cobv month. Each test works on its own
// copy of the run and of the sandbox's data.
var (
	escola = runtest.ShareSample("../../samples/escola", "carnes.yaml", "alunos.xlsx")
	cobv30 = runtest.ShareCobv(30)
)

func TestMain(m *testing.M) {
	code := m.Run()
	escola.Remove()
	cobv30.Remove()
	os.Exit(code)
}

// issueEscola gives the test its own copy of the school's carnets on its
// own embedded sandbox and returns the run folder and the sandbox.
func issueEscola(t *testing.T) (string, *sandbox.Running, *results.Results) {
	t.Helper()
	is := escola.Issue(t)
	return is.Dir, is.Sandbox, is.Results
}

// TestSyncFollowsPayments: paid, late, settled and cancelled parcels
// are seen by status, totals equal the sums of what the test paid, a
// second sync asks only for what changed, and the ledger never moves a
// charge back.
func TestSyncFollowsPayments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, rn, res := issueEscola(t)
	ctl := &control.Client{BaseURL: rn.URL}
	cl := runtest.Client(t, rn)
	opts := status.Options{Run: run.Options{Embedded: rn}}
	first, err := status.Sync(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Charges != 480 || first.Received.Count != 0 || first.Open.Count != 480 {
		t.Fatalf("first sync: %+v", first)
	}
	if first.Calls > 1 {
		t.Errorf("the first sync of 480 charges made %d calls, want 1 (one page of 1,000)", first.Calls)
	}
	// pay parcel 1 of rows 0-9 at its value, parcel 2 of row 10 with
	// R$ 3,50 more (the fine and interest the payer added)
	var want int64
	for i := 0; i <= 10; i++ {
		row := res.Rows[i]
		n, extra := 1, int64(0)
		if i == 10 {
			n, extra = 2, 350
		}
		v := row.Parcels[n-1].ValueCents + extra
		if _, err := ctl.PayParcel(ctx, row.CarnetID, n, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
			t.Fatalf("pay row %d parcel %d: %v", i, n, err)
		}
		want += v
	}
	// settle row 11's parcel 3 by hand, cancel row 12's carnet
	if err := cl.SettleParcel(ctx, res.Rows[11].CarnetID, 3); err != nil {
		t.Fatal(err)
	}
	settled := res.Rows[11].Parcels[2].ValueCents
	if err := cl.CancelCarnet(ctx, res.Rows[12].CarnetID); err != nil {
		t.Fatal(err)
	}
	var cancelled int64
	for _, p := range res.Rows[12].Parcels {
		cancelled += p.ValueCents
	}
	second, err := status.Sync(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.Received.Count != 12 || second.Received.Cents != want+settled {
		t.Errorf("received %d charges, %d cents; want 12 and %d (paid %d + settled %d)", second.Received.Count, second.Received.Cents, want+settled, want, settled)
	}
	if second.Settled.Count != 1 || second.Settled.Cents != settled {
		t.Errorf("settled %+v, want 1 of %d", second.Settled, settled)
	}
	if second.Cancel.Count != 12 || second.Cancel.Cents != cancelled {
		t.Errorf("cancelled %+v, want 12 parcels of %d", second.Cancel, cancelled)
	}
	if second.Changed != 11+1+12 {
		t.Errorf("%d changes recorded, want 24", second.Changed)
	}
	if second.Calls > 5 {
		t.Errorf("a later sync made %d calls, want at most 5 (payments, overdue, cancelled, settled, refunded)", second.Calls)
	}
	// nothing new: nothing changes, and the events stay as they were
	third, err := status.Sync(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if third.Changed != 0 || third.Received != second.Received {
		t.Errorf("a sync with nothing new changed %d charges: %+v", third.Changed, third.Received)
	}
	// a full sync again finds the same
	full, err := status.Sync(ctx, dir, status.Options{Run: run.Options{Embedded: rn}, Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if full.Changed != 0 || full.Received != second.Received || full.Cancel != second.Cancel {
		t.Errorf("a full sync disagrees with the incremental ones: %+v", full)
	}
	l, err := status.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n, _ := l.Events(ctx)
	if n != 24 {
		t.Errorf("%d events in the ledger, want 24", n)
	}
	_ = time.Now
}

// TestSyncFollowsPix: a 30-row cobv month: 10 paid by Pix, one of them
// refunded in full, one removed; a first sync lists the cobv, a later one
// asks for the Pix received since and the refunds.
func TestSyncFollowsPix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	is := cobv30.Issue(t)
	rn, out := is.Sandbox, is.Outcome
	opts := status.Options{Run: run.Options{Embedded: rn}}
	if s, err := status.Sync(ctx, out.Dir, opts); err != nil || s.Charges != 30 || s.Open.Count != 30 || s.Calls != 1 {
		t.Fatalf("first sync: %+v %v", s, err)
	}
	ctl := &control.Client{BaseURL: rn.URL}
	cl := runtest.Client(t, rn)
	var paid int64
	var refundE2E string
	for i := 0; i < 10; i++ {
		row := out.Results.Rows[i]
		pr, err := ctl.PayPix(ctx, row.Txid, "")
		if err != nil {
			t.Fatalf("pay %s: %v", row.Txid, err)
		}
		paid += row.AmountCents
		if i == 3 {
			refundE2E = pr.EndToEndID
		}
	}
	refunded := out.Results.Rows[3].AmountCents
	if _, err := cl.PutDevolucao(ctx, refundE2E, "dev1", api.DevolucaoRequest{Valor: rules.FormatPixAmount(refunded)}); err != nil {
		t.Fatal(err)
	}
	removed := out.Results.Rows[20]
	if _, err := cl.PatchCobV(ctx, removed.Txid, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"}); err != nil {
		t.Fatal(err)
	}
	// the refund settles asynchronously in the sandbox: wait for it
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := cl.GetDevolucao(ctx, refundE2E, "dev1")
		if err == nil && d.Status == "DEVOLVIDO" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refund still %v %v", d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s, err := status.Sync(ctx, out.Dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Received.Count != 9 || s.Received.Cents != paid-refunded {
		t.Errorf("received %+v, want 9 charges of %d", s.Received, paid-refunded)
	}
	if s.Refunded.Count != 1 || s.Refunded.Cents != refunded {
		t.Errorf("refunded %+v, want 1 of %d", s.Refunded, refunded)
	}
	if s.Cancel.Count != 1 || s.Cancel.Cents != removed.AmountCents {
		t.Errorf("removed %+v, want 1 of %d", s.Cancel, removed.AmountCents)
	}
	if s.Open.Count != 19 {
		t.Errorf("%d open, want 19", s.Open.Count)
	}
	if s.Calls > 3 {
		t.Errorf("a later sync made %d calls, want 3 (Pix since, refunds, removed)", s.Calls)
	}
}

// TestSyncListsEveryPage: the shared 30 cobv listed in pages of 29
// (Options.PageSize; the service's pages are of 1,000 and the sync reads
// them the same way) take two pages, the second of one. One charge of
// each page the service gives is paid before the first sync; the sync
// makes one call per page and finds both payments (a sync that read only
// the first page would leave the second's charge as it was seeded,
// ATIVA).
func TestSyncListsEveryPage(t *testing.T) {
	t.Parallel()
	const size = 29 // items a list call asks for
	ctx := context.Background()
	is := cobv30.Issue(t)
	rn, out := is.Sandbox, is.Outcome
	cl := runtest.Client(t, rn)
	ctl := &control.Client{BaseURL: rn.URL}
	byTxid := map[string]int64{}
	for _, r := range out.Results.Rows {
		byTxid[r.Txid] = r.AmountCents
	}
	var paid []string
	var cents int64
	for page := 0; page < 2; page++ {
		p := api.ListCobVParams{}
		p.Inicio, p.Fim = time.Now().Add(-24*time.Hour), time.Now().Add(24*time.Hour)
		p.PaginaAtual, p.ItensPorPagina = page, size
		list, err := cl.ListCobV(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{size, 1}[page]; len(list.Cobs) != want || list.Parametros.Paginacao.QuantidadeDePaginas != 2 {
			t.Fatalf("page %d lists %d cobv of %d pages; want %d of 2", page, len(list.Cobs), list.Parametros.Paginacao.QuantidadeDePaginas, want)
		}
		txid := list.Cobs[len(list.Cobs)-1].Txid
		if _, err := ctl.PayPix(ctx, txid, ""); err != nil {
			t.Fatalf("pay %s: %v", txid, err)
		}
		paid = append(paid, txid)
		cents += byTxid[txid]
	}
	s, err := status.Sync(ctx, out.Dir, status.Options{Run: run.Options{Embedded: rn}, PageSize: size})
	if err != nil {
		t.Fatal(err)
	}
	if s.Charges != 30 || s.Calls != 2 {
		t.Errorf("the first sync: %d charges in %d calls, want 30 in 2", s.Charges, s.Calls)
	}
	if s.Received.Count != 2 || s.Received.Cents != cents || s.Open.Count != 28 {
		t.Errorf("received %+v, open %+v; want 2 of %d (%v) and 28 open", s.Received, s.Open, cents, paid)
	}
}
