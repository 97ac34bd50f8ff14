package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBrowserCarnetDiscountWindow: a secretary setting up the school's
// carnets with "5% until 5 days before the due date" reads on the settings
// page that a carnet has one discount date for all its parcels (counted from
// the first parcel), and on the plan page which parcels get which window,
// with the dates (docs/discounts.md). Photographed at 1280 and 390 px.
func TestBrowserCarnetDiscountWindow(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	if _, err := srv.createUser(context.Background(), "secretaria", "Secretaria", "senha-da-secretaria", RoleOperator); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "secretaria", "senha-da-secretaria")
	browserGo(t, ctx, srv.URL+"/remessas/nova")
	browserTap(t, ctx, "input[name=kind][value=carnets]")
	browserUpload(t, ctx, "input[name=planilha]", "../samples/escola/alunos.xlsx")
	browserClick(t, ctx, "form[action='/remessas'] button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/colunas") {
		t.Fatalf("after upload at %s: %s", p, browserText(t, ctx, "main"))
	}
	browserClick(t, ctx, "main form button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/configuracao") {
		t.Fatalf("after the columns at %s", p)
	}
	main := browserText(t, ctx, "main")
	for _, want := range []string{
		"Desconto só até N dias antes do vencimento da 1ª parcela",
		"Um carnê tem uma só data-limite de desconto, a mesma para todas as parcelas: qualquer parcela paga até ela tem o desconto, nenhuma depois.",
		"Para desconto todo mês até N dias antes de cada vencimento, emita boletos (um por mês) em vez de carnê.",
	} {
		if !strings.Contains(main, want) {
			t.Errorf("settings page lacks %q:\n%s", want, main)
		}
	}
	if got := browserEval[string](t, ctx, `document.querySelector("input[name=discount_days]").getAttribute("aria-describedby")`); got != "desconto-carne" {
		t.Errorf("the days field is described by %q, want the carnet note", got)
	}
	browserType(t, ctx, "input[name=due]", "dia 10 do próximo mês")
	browserType(t, ctx, "input[name=discount_value]", "5%")
	browserType(t, ctx, "input[name=discount_days]", "5")
	browserBothWidths(t, ctx, "configuracao")
	browserClick(t, ctx, "main form button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/validacao") {
		t.Fatalf("after settings at %s: %s", p, browserText(t, ctx, "main"))
	}
	browserClick(t, ctx, "a.btn[href$='/plano']")
	if !browserHas(t, ctx, "#descontos") {
		t.Fatalf("the plan page has no discount section:\n%s", browserText(t, ctx, "main"))
	}
	// The job's clock is this machine's: the dates are worked out from today
	// as the job does ("dia 10 do próximo mês").
	first, until := nextTenth()
	got := browserText(t, ctx, "#descontos")
	for _, want := range []string{
		"Um carnê tem uma só data-limite de desconto para todas as parcelas.",
		"5% até " + until + ", uma só data para o carnê: na 1ª parcela (vence " + first + "), até 5 dias antes do vencimento; nas parcelas 2 a 12",
		"só se pagas até " + until + ", antes do vencimento — 40 carnês",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan's discount section lacks %q:\n%s", want, got)
		}
	}
	browserBothWidths(t, ctx, "plano")
	browserCheckConsole(t, rec)
}

// nextTenth is "dia 10 do próximo mês" from today in São Paulo, and five
// days before it, as dd/mm/aaaa.
func nextTenth() (first, until string) {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		loc = time.FixedZone("BRT", -3*3600)
	}
	y, m, _ := time.Now().In(loc).Date()
	m++
	if m > 12 {
		m, y = 1, y+1
	}
	return fmt.Sprintf("10/%02d/%d", m, y), fmt.Sprintf("05/%02d/%d", m, y)
}
