package listen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/listen"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/sandbox/control"
)

// TestNotificationsKilledBeforeApply: a boletos job names the listener as
// its notification_url; the sandbox's outbox posts every status change
// (creation, payments, a settlement, a cancellation) to it, the test posts
// every token again twice in reverse order, and the listener is killed
// with everything in its inbox and nothing applied. A new listener on the
// same listen.db applies the inbox: the ledger ends identical to a
// `status` sync by polling on a copy of the run folder, and the
// duplicates changed nothing.
func TestNotificationsKilledBeforeApply(t *testing.T) {
	ctx := context.Background()
	rn, ctl := startSandbox(t)
	jobDir := copyJob(t, "boletos", "boletos.yaml", "clientes.csv")
	runsDir := filepath.Join(jobDir, "out")
	os.MkdirAll(runsDir, 0o755)
	opts := listen.Options{RunsDir: runsDir, Run: run.Options{Embedded: rn, Getenv: noEnv}}

	// the first listener: receives, never applies
	first := serve(t, "", opts)
	withLine(t, filepath.Join(jobDir, "boletos.yaml"), "custom_id:", `    notification_url: "`+first.URL+`/notificacao"`)
	out, err := run.Run(ctx, filepath.Join(jobDir, "boletos.yaml"), run.Options{Embedded: rn, RunsDir: runsDir, Getenv: noEnv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v", err)
	}
	res, err := out.LoadResults() // the rows are in results.json
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 25 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	// pay rows 0-7 (row 3 with R$ 2,50 more, row 5 with R$ 1,00 less),
	// settle row 8, cancel row 9
	want := map[int64]int64{}
	for i := 0; i < 8; i++ {
		id := res.Rows[i].ChargeIDs[0]
		v := res.Rows[i].AmountCents
		switch i {
		case 3:
			v += 250
		case 5:
			v -= 100
		}
		if _, err := ctl.PayCharge(ctx, id, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
			t.Fatalf("pay row %d: %v", i, err)
		}
		want[id] = v
	}
	if err := cl.SettleCharge(ctx, res.Rows[8].ChargeIDs[0]); err != nil {
		t.Fatal(err)
	}
	if err := cl.CancelCharge(ctx, res.Rows[9].ChargeIDs[0]); err != nil {
		t.Fatal(err)
	}
	waitOutbox(t, ctl)

	// every token again, twice, newest first
	its, err := first.L.Items(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 25 {
		t.Fatalf("%d tokens in the inbox, want 25 (one per slip)", len(its))
	}
	sort.Slice(its, func(i, j int) bool { return its[i].ID > its[j].ID })
	for round := 0; round < 2; round++ {
		for _, it := range its {
			postToken(t, first.URL+"/notificacao", it.Key)
		}
	}
	st, err := first.L.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Items != 25 || st.Pending != 25 || st.Applied != 0 || st.Duplicates < 50 {
		t.Fatalf("before the kill: %+v", st)
	}
	// killed between receipt and apply
	first.Close()
	if _, err := os.Stat(filepath.Join(out.Dir, status.FileName)); err == nil {
		t.Fatal("the killed listener wrote the ledger")
	}

	// a listener whose service is unreachable keeps the item and retries
	dead := serve(t, "", listen.Options{RunsDir: runsDir, Run: run.Options{BaseURL: "http://127.0.0.1:1", Getenv: noEnv, Timeout: time.Second},
		RetryMin: time.Millisecond})
	d, err := dead.L.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Failed != 25 || d.Applied != 0 {
		t.Fatalf("with the service down: %+v", d)
	}
	pend, _ := dead.L.Items(ctx, listen.StatePending)
	if len(pend) != 25 || pend[0].Attempts != 1 || pend[0].LastError == "" {
		t.Fatalf("pending after a failure: %d, %+v", len(pend), pend[0])
	}
	dead.Close()

	// restarted on the same listen.db (and address)
	second := serve(t, first.addr(), opts)
	d, err = second.L.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Applied != 25 || d.Failed != 0 || d.Orphans != 0 || d.Changed != 10 {
		t.Fatalf("after the restart: %+v", d)
	}
	// a late duplicate of a paid slip's token, and a token of no run
	postToken(t, second.URL+"/notificacao", its[len(its)-1].Key)
	postToken(t, second.URL+"/notificacao/outra", "token-de-ninguem")
	d, err = second.L.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Applied != 1 || d.Changed != 0 || d.Orphans != 1 {
		t.Errorf("a late duplicate and an unknown token: %+v", d)
	}
	orph, _ := second.L.Orphans(ctx)
	if len(orph) != 1 || orph[0].Key != "token-de-ninguem" {
		t.Errorf("orphans: %+v", orph)
	}
	second.Close()

	got := ledgerOf(t, out.Dir)
	polled := copyRun(t, out.Dir)
	if _, err := status.Sync(ctx, polled, status.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}); err != nil {
		t.Fatal(err)
	}
	sameLedger(t, got, ledgerOf(t, polled))
	for _, c := range got {
		switch {
		case want[c.ChargeID] != 0:
			if c.State != status.StatePaid || c.PaidCents != want[c.ChargeID] || c.PaidAt == "" || c.Method != status.MethodBoleto {
				t.Errorf("paid slip %d: %+v, want paid %d", c.ChargeID, c, want[c.ChargeID])
			}
		case c.ChargeID == res.Rows[8].ChargeIDs[0]:
			if c.State != status.StateSettled || c.PaidCents != res.Rows[8].AmountCents {
				t.Errorf("settled slip: %+v", c)
			}
		case c.ChargeID == res.Rows[9].ChargeIDs[0]:
			if c.State != status.StateCancelled {
				t.Errorf("cancelled slip: %+v", c)
			}
		default:
			if c.State != status.StateOpen {
				t.Errorf("slip %d: %+v, want open", c.ChargeID, c)
			}
		}
	}
}

// TestPixWebhook: a 20-row cobv job whose key has the listener as its
// webhook; 6 cobv paid through the sandbox (the outbox posts
// /webhook/pix), one webhook posted again by hand (a duplicate), a Pix of
// no run's txid (an orphan), a forged Pix on a real txid (refused: the
// service does not confirm it); the ledger ends identical to a sync by
// polling.
func TestPixWebhook(t *testing.T) {
	ctx := context.Background()
	rn, ctl := startSandbox(t)
	jobDir := copyJob(t, "mensal", "cobv.yaml")
	b, err := os.ReadFile("../../samples/mensal/pagadores.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for i, c := range b {
		if c == '\n' {
			lines++
			if lines == 21 {
				b = b[:i+1]
				break
			}
		}
	}
	os.WriteFile(filepath.Join(jobDir, "pagadores.csv"), b, 0o644)
	runsDir := filepath.Join(jobDir, "out")
	os.MkdirAll(runsDir, 0o755)
	opts := listen.Options{RunsDir: runsDir, Run: run.Options{Embedded: rn, Getenv: noEnv}}
	srv := serve(t, "", opts)

	out, err := run.Run(ctx, filepath.Join(jobDir, "cobv.yaml"), run.Options{Embedded: rn, RunsDir: runsDir, Getenv: noEnv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v", err)
	}
	res, err := out.LoadResults() // the rows are in results.json
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 20 {
		t.Fatalf("%d rows", len(res.Rows))
	}
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.PutWebhook(ctx, "financeiro@associacao.example.com", srv.URL+"/webhook"); err != nil {
		t.Fatal(err)
	}
	paid := map[string]bool{}
	var last control.PixPayResult
	for i := 0; i < 6; i++ {
		r, err := ctl.PayPix(ctx, res.Rows[i*3].Txid, "")
		if err != nil {
			t.Fatalf("pay row %d: %v", i*3, err)
		}
		paid[r.Txid], last = true, r
	}
	waitOutbox(t, ctl)
	// the last one again, by hand, as the service would send it
	px, err := cl.GetPix(ctx, last.EndToEndID)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"pix": []any{px}})
	post(t, srv.URL+"/webhook/pix", "application/json", string(body))
	post(t, srv.URL+"/pix", "application/json", `{"pix":[{"endToEndId":"E00000000202601011200ABCDEFGHIJK","txid":"semexecucao0000000000000000000","valor":"10.00","horario":"2026-01-01T12:00:00Z","chave":"x"}]}`)
	post(t, srv.URL+"/pix", "application/json", `{"pix":[]}`) // the service probing the URL
	// a forgery: an unpaid row's real txid with a Pix the service never received
	forged := fmt.Sprintf(`{"pix":[{"endToEndId":"E00000000202601011200FORJADO01","txid":%q,"valor":"999.00","horario":"2026-01-01T12:00:00Z","chave":"x"}]}`, res.Rows[1].Txid)
	post(t, srv.URL+"/webhook/pix", "application/json", forged)

	d, err := srv.L.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Applied != 6 || d.Changed != 6 || d.Orphans != 1 || d.Refused != 1 || d.Failed != 0 || len(d.Runs) != 1 {
		t.Fatalf("drain: %+v", d)
	}
	st, _ := srv.L.Stats(ctx)
	if st.Items != 8 || st.Duplicates < 1 || st.Deliveries < 9 || st.Refused != 1 {
		t.Errorf("stats: %+v", st)
	}
	if ref, _ := srv.L.Items(ctx, listen.StateRefused); len(ref) != 1 || !strings.Contains(ref[0].LastError, "não confirma") {
		t.Errorf("refused items: %+v", ref)
	}
	srv.Close()

	got := ledgerOf(t, out.Dir)
	polled := copyRun(t, out.Dir)
	if _, err := status.Sync(ctx, polled, status.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}); err != nil {
		t.Fatal(err)
	}
	sameLedger(t, got, ledgerOf(t, polled))
	n := 0
	for _, c := range got {
		if paid[c.Txid] {
			n++
			if c.State != status.StatePaid || c.PaidCents <= 0 || c.Method != status.MethodPix || c.PaidAt == "" {
				t.Errorf("paid cobv %s: %+v", c.Txid, c)
			}
		} else if c.State != status.StateOpen {
			t.Errorf("cobv %s: %+v, want open", c.Txid, c)
		}
	}
	if n != 6 {
		t.Errorf("%d paid cobv in the ledger, want 6", n)
	}
}

// TestCarnetsLive: the school's 40 carnets name the listener through
// ${ESCOLA_WEBHOOK} (how a job names its public URL); the worker runs
// while the sandbox's outbox posts the carnets' tokens (one per carnet,
// for its 12 parcels): paid parcels, one with fine and interest, a parcel
// settled by hand and a cancelled carnet end in the ledger as a sync by
// polling sees them.
func TestCarnetsLive(t *testing.T) {
	ctx := context.Background()
	rn, ctl := startSandbox(t)
	jobDir := copyJob(t, "escola", "carnes.yaml", "alunos.xlsx")
	runsDir := filepath.Join(jobDir, "out")
	os.MkdirAll(runsDir, 0o755)
	srv := serve(t, "", listen.Options{RunsDir: runsDir, Run: run.Options{Embedded: rn, Getenv: noEnv}})
	wctx, stop := context.WithCancel(ctx)
	worked := make(chan struct{})
	go func() { srv.L.Work(wctx); close(worked) }()
	defer func() { stop(); <-worked }()

	env := func(k string) (string, bool) {
		if k == "ESCOLA_WEBHOOK" {
			return srv.URL + "/notificacao/escola", true
		}
		return "", false
	}
	out, err := run.Run(ctx, filepath.Join(jobDir, "carnes.yaml"), run.Options{Embedded: rn, RunsDir: runsDir, Getenv: env})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("run: %v", err)
	}
	res, err := out.LoadResults() // the rows are in results.json
	if err != nil {
		t.Fatal(err)
	}
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= 10; i++ {
		n, v := 1, res.Rows[i].Parcels[0].ValueCents
		if i == 10 {
			n, v = 2, res.Rows[i].Parcels[1].ValueCents+350
		}
		if _, err := ctl.PayParcel(ctx, res.Rows[i].CarnetID, n, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
			t.Fatalf("pay row %d parcel %d: %v", i, n, err)
		}
	}
	if err := cl.SettleParcel(ctx, res.Rows[11].CarnetID, 3); err != nil {
		t.Fatal(err)
	}
	if err := cl.CancelCarnet(ctx, res.Rows[12].CarnetID); err != nil {
		t.Fatal(err)
	}
	waitOutbox(t, ctl)
	for deadline := waitLimit(t); ; {
		st, err := srv.L.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending == 0 && st.Items == 40 {
			if st.Orphans != 0 || st.Applied != 40 {
				t.Fatalf("stats: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not apply the inbox: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	<-worked
	srv.Close()

	got := ledgerOf(t, out.Dir)
	polled := copyRun(t, out.Dir)
	if _, err := status.Sync(ctx, polled, status.Options{Run: run.Options{Embedded: rn, Getenv: noEnv}}); err != nil {
		t.Fatal(err)
	}
	sameLedger(t, got, ledgerOf(t, polled))
	sum := status.Summarize(got, time.Now())
	if sum.Received.Count != 12 || sum.Settled.Count != 1 || sum.Cancel.Count != 12 {
		t.Errorf("received %+v, settled %+v, cancelled %+v; want 12, 1 and 12", sum.Received, sum.Settled, sum.Cancel)
	}
}
