package conciliacao_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// bigRun writes a 100,000-row cobv run folder: results.json, the journal
// with each row's request (its terms) and a ledger in which 30 % are paid
// (a tenth of them late, with fine and interest), 2 % removed and 1 %
// refunded.
func bigRun(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	r := &results.Results{Version: results.FileVersion, Run: results.RunInfo{ID: "big", JobName: "Grande", Kind: results.Cobv, Service: "sandbox",
		StartedAt: "2026-11-01T10:00:00Z", Complete: true}}
	r.Rows = make([]results.Row, n)
	for i := range r.Rows {
		r.Rows[i] = results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("K%07d", i), PayerName: fmt.Sprintf("Pagador %d da Silva", i),
			PayerDoc: fmt.Sprintf("%011d", i), Outcome: results.Issued, AmountCents: int64(1000 + i%50000), DueDate: fmt.Sprintf("2026-%02d-10", 1+i%12),
			Txid: fmt.Sprintf("remessa7f3a%024d", i)}
	}
	r.Compute()
	f, err := os.Create(filepath.Join(dir, "results.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.NewEncoder(f).Encode(r); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	// the journal the run kept: each row's request, with the mensal
	// sample's terms (multa 2 %, juros 1 % a month, R$ 10,00 off until 5
	// days before the due date) and the payer's e-mail
	jn, err := journal.Create(filepath.Join(dir, journal.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	jrows := make([]journal.Row, 0, 1000)
	for i := range r.Rows {
		row := &r.Rows[i]
		due, _ := time.Parse("2006-01-02", row.DueDate)
		req := fmt.Sprintf(`{"cobv":{"calendario":{"dataDeVencimento":%q,"validadeAposVencimento":30},"txid":%q,"devedor":{"cpf":%q,"nome":%q,"email":"pagador.%d@example.com"},`+
			`"valor":{"original":%q,"multa":{"modalidade":2,"valorPerc":"2.00"},"juros":{"modalidade":3,"valorPerc":"1.00"},"desconto":{"modalidade":1,"descontoDataFixa":[{"data":%q,"valorPerc":"10.00"}]}},`+
			`"chave":"financeiro@associacao.example.com","solicitacaoPagador":"Mensalidade associação - associado %s"}}`,
			row.DueDate, row.Txid, row.PayerDoc, row.PayerName, i, rules.FormatPixAmount(row.AmountCents), due.AddDate(0, 0, -5).Format("2006-01-02"), row.Key)
		jrows = append(jrows, journal.Row{Index: i, Key: row.Key, State: "done", Info: json.RawMessage(`{}`), Req: json.RawMessage(req)})
		if len(jrows) == cap(jrows) || i == len(r.Rows)-1 {
			if err := jn.Tx(context.Background(), func(tx *journal.Tx) error { return tx.AddRows(jrows) }); err != nil {
				tb.Fatal(err)
			}
			jrows = jrows[:0]
		}
	}
	jn.Close()
	l, err := status.OpenLedger(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	now := time.Date(2026, 12, 20, 12, 0, 0, 0, time.UTC)
	if _, err := l.Seed(ctx, r, now); err != nil {
		tb.Fatal(err)
	}
	var obs []status.Observation
	for i := range r.Rows {
		row := &r.Rows[i]
		o := status.Observation{Key: status.KeyOfCobv(row.Txid)}
		switch {
		case i%100 < 30:
			o.Status, o.State, o.Method, o.PaidCents = "CONCLUIDA", status.StatePaid, status.MethodPix, row.AmountCents
			o.PaidAt = row.DueDate + "T10:00:00-03:00"
			if i%10 == 0 {
				o.PaidCents += 250
				o.PaidAt = row.DueDate[:8] + "20T10:00:00-03:00"
			}
		case i%100 < 32:
			o.Status, o.State = "REMOVIDA_PELO_USUARIO_RECEBEDOR", status.StateCancelled
		case i%100 == 32:
			o.Status, o.State, o.Method, o.PaidCents, o.RefundCents = "CONCLUIDA", status.StateRefunded, status.MethodPix, row.AmountCents, row.AmountCents
			o.PaidAt = row.DueDate + "T09:00:00-03:00"
		default:
			continue
		}
		obs = append(obs, o)
	}
	if _, err := l.Apply(ctx, obs, now, "bench"); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BenchmarkReconciliation100k times the reconciliation of a 100,000-charge
// run, every format, in a child process (this test binary through
// TestMain), and reports the child's peak RSS (its VmHWM, read by the
// child). Targets: 10 s, 150 MB. Run it with -benchtime 1x.
func BenchmarkReconciliation100k(b *testing.B) {
	dir := bigRun(b, 100_000)
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "REMESSA_CONCILIACAO_CHILD="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		// the child's own peak (VmHWM): getrusage's maxrss of a child
		// started from a big parent keeps the parent's peak across exec
		var kb int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "VmHWM: %d kB", &kb); err != nil {
			b.Fatalf("child's peak: %q", out)
		}
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
	}
}

// TestMain runs this binary as the benchmark's child when
// REMESSA_CONCILIACAO_CHILD names a run folder.
func TestMain(m *testing.M) {
	if dir := os.Getenv("REMESSA_CONCILIACAO_CHILD"); dir != "" {
		_, r, err := conciliacao.WriteRun(context.Background(), dir, time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), "pt")
		if err != nil || !r.Reconcile.OK || r.Totals.Charges != 100_000 {
			fmt.Fprintln(os.Stderr, "child:", err, r != nil && r.Reconcile.OK)
			os.Exit(1)
		}
		st, _ := os.ReadFile("/proc/self/status")
		for _, ln := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(ln, "VmHWM:") {
				fmt.Println(strings.Join(strings.Fields(ln), " "))
			}
		}
		os.Exit(0)
	}
	code := m.Run()
	escola.Remove()
	os.Exit(code)
}

// BenchmarkReconciliation500 times the reconciliation of a run of 500
// charges, every format, in the process: what the desk's follow job
// writes for a school's run at every tick.
func BenchmarkReconciliation500(b *testing.B) {
	dir := bigRun(b, 500)
	day := time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for b.Loop() {
		if _, r, err := conciliacao.WriteRun(context.Background(), dir, day, "pt"); err != nil || !r.Reconcile.OK {
			b.Fatalf("%v %v", err, r != nil && r.Reconcile.OK)
		}
	}
}
