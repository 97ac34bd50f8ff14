package web

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/results"
	"remessa/sandbox/control"
)

// TestQuemDeveOnRunPage: the school's carnets issued through the desk
// (fine 2 %, interest 0,033 % a day); Cláudia (row 0) pays R$ 100,00 of
// her first parcel of R$ 980,00 (due 10/12/2027: a fixed date, so the
// weekdays below hold, a year ahead so that it is not past); then the
// service's clock moves to 20/01/2028 (41 days after the first due date,
// 10 after the second), "Atualizar situação" again, and the run's page
// lists who owes as of the service's day, the largest amount first, in a
// real browser at 1280 and 390 px.
func TestQuemDeveOnRunPage(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, "../samples/escola/alunos.xlsx")})
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	c.postForm(base+"/colunas", nil)
	r = c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades 2027"}, "repeats": {"12"}, "due": {"10/12/2027"},
		"fine": {"2%"}, "interest": {"0,033%"}, "on_invalid": {"stop"}})
	if !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %d at %s", r.Status, r.URL.Path)
	}
	if r = c.postForm(base+"/executar", nil); !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", r.Status, r.URL.Path)
	}
	run := waitRun(t, srv, 1, 90*time.Second)
	if run.Status != "done" {
		t.Fatalf("run ended %s: %s", run.Status, run.Message)
	}
	res, err := results.Load(filepath.Join(run.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	v := int64(10000)
	ctl := sandboxControl(t, rn.URL)
	if _, err := ctl.PayParcel(context.Background(), res.Rows[0].CarnetID, 1, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	// the service's clock moves to 20/01/2028: every carnet's parcels 1 and
	// 2 are overdue (41 and 10 days); Cláudia also paid 880,00 short
	if _, err := ctl.Advance(context.Background(), control.AdvanceRequest{To: "2028-01-20"}); err != nil {
		t.Fatal(err)
	}
	if r = c.postForm("/execucoes/1/situacao", nil); r.Status != http.StatusOK || !strings.Contains(r.Body, "Totais conferem ao centavo") {
		t.Fatalf("refresh: %d", r.Status)
	}
	ctx := newBrowser(t)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "admin", adminTestPassword)
	browserGo(t, ctx, srv.URL+"/execucoes/1#quem-deve")
	if got := browserText(t, ctx, "#quem-deve"); got != "Quem deve" {
		t.Fatalf("the run page has no Quem deve block: %q", got)
	}
	// ten payers shown, the other 30 behind "ver todos os 40", closed
	shown := browserEval[int](t, ctx, `document.querySelectorAll('#quem-deve-tabela tbody tr').length`)
	folded := browserEval[int](t, ctx, `document.querySelectorAll('#quem-deve-resto tbody tr').length`)
	if shown != 10 || folded != 30 {
		t.Errorf("%d payers shown and %d folded, want 10 and 30 (every carnet has two parcels overdue)", shown, folded)
	}
	if open := browserEval[bool](t, ctx, `document.querySelector('#quem-deve-mais').open`); open {
		t.Error("the folded payers are open before anyone asked")
	}
	if got := browserText(t, ctx, "#quem-deve-mais summary"); got != "ver todos os 40" {
		t.Errorf("the fold says %q, want \"ver todos os 40\"", got)
	}
	browserBothWidths(t, ctx, "quem-deve") // folded, as a secretary first sees it
	browserViewport(t, ctx, 1280)
	browserEval[bool](t, ctx, `document.querySelector('#quem-deve-mais summary').click(), true`)
	// Cláudia: parcel 1 (980,00, paid 100,00) is paid short 880,00 and
	// not overdue; parcel 2 (980,00, due Monday 10/01/2028, a business
	// day) is 10 days overdue: fine 19,60 + interest 980,00 × 0,033 % × 10
	// = 3,234 → 3,23; total 880,00 + 980,00 + 22,83 = 1.882,83
	row := browserText(t, ctx, "tr[data-owes='"+res.Rows[0].Key+"']")
	for _, want := range []string{"Cláudia Ribeiro Falcão", "claudia.0@example.com", "R$ 880,00", "R$ 980,00", "R$ 22,83", "R$ 1.882,83"} {
		if !strings.Contains(row, want) {
			t.Errorf("Cláudia's row lacks %q: %q", want, row)
		}
	}
	// the largest amount first: the first row's total is not below the second's
	first := browserText(t, ctx, "#quem-deve-tabela tbody tr:nth-child(1) td:nth-child(6)")
	second := browserText(t, ctx, "#quem-deve-tabela tbody tr:nth-child(2) td:nth-child(6)")
	if centsOf(first) < centsOf(second) {
		t.Errorf("not sorted by amount: %s before %s", first, second)
	}
	// the reconciliation's own page, as the accountant opens it
	browserGo(t, ctx, "file://"+filepath.Join(run.Dir, "conciliacao.html"))
	page := browserText(t, ctx, "body")
	for _, want := range []string{"Posição em 20/01/2028", "(horário de Brasília)", "Quem deve", "dez/2027", "Totais conferem ao centavo", "R$ 1.882,83"} {
		if !strings.Contains(page, want) {
			t.Errorf("conciliacao.html lacks %q", want)
		}
	}
	shot(t, ctx, "conciliacao-1280")
	browserViewport(t, ctx, 390)
	shot(t, ctx, "conciliacao-390")
	if o := browserOverflow(t, ctx); o > 0 {
		t.Errorf("conciliacao.html scrolls sideways by %d px at 390 px", o)
	}
}

// centsOf reads "R$ 1.882,51" as 188251.
func centsOf(s string) int64 {
	var c int64
	for _, r := range s {
		if r >= '0' && r <= '9' {
			c = c*10 + int64(r-'0')
		}
	}
	return c
}
