package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// snakeCode matches a code written for programs: two or more lowercase
// words joined by "_" (due_date, zeros_restaurados, cpf_invalido).
var snakeCode = regexp.MustCompile(`\b[a-z]+(_[a-z0-9]+)+\b`)

// visibleText is the text of an HTML page a person reads: tags, attribute
// values, scripts and styles removed.
func visibleText(html string) string {
	html = regexp.MustCompile(`(?s)<(script|style)\b.*?</(script|style)>`).ReplaceAllString(html, " ")
	return regexp.MustCompile(`(?s)<[^>]*>`).ReplaceAllString(html, " ")
}

// TestColumnsPageWords: the Colunas page of the school's sheet, uploaded as
// carnets (no due date column: the first due date is asked on the next
// page), does not call the due date a missing column nor name any field by
// its code ("Faltam colunas obrigatórias: due_date" before): it says in
// words that the next page can give it. A slip sheet with no name and no
// CPF column still lists them as missing, in words.
func TestColumnsPageWords(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, "../samples/escola/alunos.xlsx")})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/colunas") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	text := visibleText(r.Body)
	if m := snakeCode.FindAllString(text, -1); len(m) > 0 {
		t.Errorf("columns page shows codes to people: %q", m)
	}
	if strings.Contains(text, "Faltam colunas") {
		t.Errorf("columns page calls a column missing that the next page can give:\n%s", text)
	}
	if !strings.Contains(r.Body, `id="cols-later"`) || !regexp.MustCompile(`Nenhuma coluna da planilha traz\s*<b>Vencimento</b>: informe o primeiro vencimento na próxima página \(Configuração\)`).MatchString(r.Body) {
		t.Errorf("columns page does not say where the due date can come from:\n%s", text)
	}
	if strings.Contains(r.Body, ">Vencimento *<") {
		t.Errorf("the due date is marked required though the next page can give it")
	}
	carnetCols := r.URL.Path

	csv := "Valor;Vencimento\n10,00;10/02/2027\n"
	r = c.postMultipart("/remessas", url.Values{"kind": {"boletos"}, "account": {"1"}},
		upload{Field: "planilha", Name: "boletos.csv", Data: []byte(csv)})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/colunas") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	if !regexp.MustCompile(`Faltam colunas obrigatórias:\s*<b>Código</b>, <b>Nome</b>, <b>CPF/CNPJ</b>`).MatchString(r.Body) {
		t.Errorf("slip sheet without key, name and CPF:\n%s", visibleText(r.Body))
	}
	if m := snakeCode.FindAllString(visibleText(r.Body), -1); len(m) > 0 {
		t.Errorf("columns page shows codes to people: %q", m)
	}
	// in English too
	en := c.get(carnetCols + "?lang=en")
	if !strings.Contains(en.Body, "No column of the sheet holds <b>Due date</b>: give the first due date on the next page (Settings)") {
		t.Errorf("English columns page:\n%s", visibleText(en.Body))
	}
	if m := snakeCode.FindAllString(visibleText(en.Body), -1); len(m) > 0 {
		t.Errorf("English columns page shows codes to people: %q", m)
	}
}

// TestValidationFiltersWords: the Conferência page's filters name each
// problem in words ("Dígitos verificadores do CPF não conferem (1)"), not by
// its code ("cpf_invalido (1)" before); the code stays in the filter's
// address and data-code, for programs.
func TestValidationFiltersWords(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.xlsx", Data: readSample(t, brokenAlunos(t, t.TempDir()))})
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	c.postForm(base+"/colunas", nil)
	r = c.postForm(base+"/configuracao", url.Values{"name": {"Mensalidades 2027"}, "repeats": {"12"}, "due": {"dia 10 do próximo mês"},
		"fine": {"2%"}, "interest": {"0,033%"}, "on_invalid": {"stop"}})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %d at %s: %s", r.Status, r.URL.Path, visibleText(r.Body))
	}
	for _, want := range []string{
		`href="` + base + `/validacao?problema=cpf_invalido"`,
		`data-code="cpf_invalido"`,
		`>Dígitos verificadores do CPF não conferem (1)</a>`,
		`>Valor vazio (1)</a>`,
	} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("validation page lacks %s", want)
		}
	}
	if m := snakeCode.FindAllString(visibleText(r.Body), -1); len(m) > 0 {
		t.Errorf("validation page shows codes to people: %q", m)
		for _, l := range strings.Split(r.Body, "\n") {
			if snakeCode.MatchString(visibleText(l)) {
				t.Log(l)
			}
		}
	}
	f := c.get(base + "/validacao?problema=cpf_invalido&lang=en")
	if !strings.Contains(f.Body, `aria-current="page">CPF check digits do not match (1)</a>`) {
		t.Errorf("English filtered page:\n%s", visibleText(f.Body))
	}
}

// TestBrowserWordsNotCodes: in a real browser, the school's sheet uploaded
// as carnets shows on Colunas where the due date comes from (in words), and
// on Conferência filters named in words; both pages photographed at 1280
// and 390 px.
func TestBrowserWordsNotCodes(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	ctx := newBrowser(t)
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "admin", testAdminPassword)
	browserGo(t, ctx, srv.URL+"/remessas/nova")
	browserTap(t, ctx, "input[name=kind][value=carnets]")
	browserUpload(t, ctx, "input[name=planilha]", brokenAlunos(t, t.TempDir()))
	browserClick(t, ctx, "form[action='/remessas'] button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/colunas") {
		t.Fatalf("after upload at %s: %s", p, browserText(t, ctx, "main"))
	}
	browserBothWidths(t, ctx, "colunas")
	if got := browserText(t, ctx, "#cols-later"); !strings.Contains(got, "Nenhuma coluna da planilha traz Vencimento: informe o primeiro vencimento na próxima página (Configuração)") {
		t.Errorf("Colunas says %q", got)
	}
	if main := browserText(t, ctx, "main"); snakeCode.MatchString(main) || strings.Contains(main, "Faltam colunas") {
		t.Errorf("Colunas shows a code or a missing column:\n%s", main)
	}
	browserClick(t, ctx, "main form button.btn")
	browserType(t, ctx, "input[name=due]", "dia 10 do próximo mês")
	browserClick(t, ctx, "main form button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/validacao") {
		t.Fatalf("after settings at %s: %s", p, browserText(t, ctx, "main"))
	}
	browserBothWidths(t, ctx, "conferencia")
	filters := browserText(t, ctx, "p.filters")
	for _, want := range []string{"Dígitos verificadores do CPF não conferem (1)", "Valor vazio (1)"} {
		if !strings.Contains(filters, want) {
			t.Errorf("filters %q lack %q", filters, want)
		}
	}
	if main := browserText(t, ctx, "main"); snakeCode.MatchString(main) {
		t.Errorf("Conferência shows codes: %q", snakeCode.FindAllString(main, -1))
	}
	browserClick(t, ctx, "p.filters a[data-code=cpf_invalido]")
	if got := browserText(t, ctx, "p.filters a[aria-current=page]"); got != "Dígitos verificadores do CPF não conferem (1)" {
		t.Errorf("the chosen filter reads %q", got)
	}
	browserBothWidths(t, ctx, "conferencia-cpf")
	browserCheckConsole(t, rec)
}
