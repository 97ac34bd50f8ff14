package web

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/pipeline/run/runtest"
)

const (
	xssScript  = `<script>alert(1)</script>`
	xssFormula = `=HYPERLINK("http://x.example","clique")`
	xssImg     = `<img src=x onerror=alert(2)>`
)

// hostileCSV is a slip sheet whose payers are named like attacks: two
// valid rows (a script tag, a spreadsheet formula) and two refused ones
// (an img tag, the formula again) with a wrong CPF.
func hostileCSV(t *testing.T) string {
	due := time.Now().AddDate(0, 1, 0).Format("02/01/2006")
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	lines := []string{"Código;Nome;CPF;Valor;Vencimento;Descrição",
		fmt.Sprintf("X1;%s;%s;150,00;%s;Mensalidade", q(xssScript), runtest.CPF("123456789"), due),
		fmt.Sprintf("X2;%s;%s;99,90;%s;Mensalidade", q(xssFormula), runtest.CPF("987654321"), due),
		fmt.Sprintf("X3;%s;11122233344;10,00;%s;Mensalidade", q(xssImg), due),
		fmt.Sprintf("X4;%s;11122233355;10,00;%s;Mensalidade", q(xssFormula), due),
	}
	p := filepath.Join(t.TempDir(), "hostis.csv")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\r\n")+"\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHostileNamesShowAsText: payers named <script>…, <img onerror=…> and
// =HYPERLINK(…) show as the text they are on every page (no script runs,
// the CSP sees nothing to refuse), and every download keeps them text.
func TestHostileNamesShowAsText(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	ctx := newBrowser(t)
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR")
	browserLogin(t, ctx, srv, "admin", adminTestPassword)
	checkPage := func(name string, wants ...string) {
		t.Helper()
		if n := browserEval[int](t, ctx, `document.scripts.length`); n != 1 {
			t.Errorf("%s: %d script elements, want only app.js", name, n)
		}
		if n := browserEval[int](t, ctx, `document.images.length`); n != 0 {
			t.Errorf("%s: %d images on the page (an <img> name became markup)", name, n)
		}
		text := browserText(t, ctx, "main")
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the page does not show %q as text", name, w)
			}
		}
		shot(t, ctx, name)
	}

	browserGo(t, ctx, srv.URL+"/remessas/nova")
	browserTap(t, ctx, "input[name=kind][value=boletos]")
	browserUpload(t, ctx, "input[name=planilha]", hostileCSV(t))
	browserClick(t, ctx, "form[action='/remessas'] button.btn")
	base := strings.TrimSuffix(browserPath(t, ctx), "/colunas")
	checkPage("e-colunas")
	browserClick(t, ctx, "main form button.btn")
	browserSelect(t, ctx, "select[name=on_invalid]", "skip")
	browserClick(t, ctx, "main form button.btn")
	if browserPath(t, ctx) != base+"/validacao" {
		t.Fatalf("settings refused: %s", browserText(t, ctx, "main"))
	}
	checkPage("e-validacao", xssScript, xssFormula, xssImg)

	status, _, rej := fetchBytes(t, ctx, base+"/recusadas")
	if status != 200 || !bytes.Contains(rej, []byte(`'=HYPERLINK`)) || !bytes.Contains(rej, []byte(xssImg)) {
		t.Errorf("refused rows CSV (%d) should hold the img name and the formula defused with an apostrophe:\n%s", status, rej)
	}
	browserClick(t, ctx, "a.btn[href$='/plano']")
	browserClick(t, ctx, "#confirmar")
	browserWait(t, ctx, ".badge.done, .badge.problems")
	runPath := browserPath(t, ctx)
	checkPage("e-resultado", xssScript, xssFormula)

	status, _, report := fetchBytes(t, ctx, runPath+"/relatorio")
	// the report lists totals and problems, not every payer; whatever
	// names it shows are escaped
	if status != 200 || bytes.Contains(report, []byte(xssScript)) || bytes.Contains(report, []byte(xssImg)) {
		t.Errorf("relatorio.html (%d) holds a payer's name as markup", status)
	}
	status, _, linhas := fetchBytes(t, ctx, runPath+"/arquivos/linhas.csv")
	if status != 200 || !bytes.Contains(linhas, []byte(`'=HYPERLINK`)) {
		t.Errorf("linhas.csv (%d) should defuse the formula name:\n%s", status, linhas)
	}
	status, _, xb := fetchBytes(t, ctx, runPath+"/arquivos/relatorio.xlsx")
	if status != 200 {
		t.Fatalf("relatorio.xlsx: %d", status)
	}
	x, err := excelize.OpenReader(bytes.NewReader(xb))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	found := false
	for _, sh := range x.GetSheetList() {
		rows, _ := x.GetRows(sh)
		for ri, row := range rows {
			for ci, v := range row {
				if v == xssFormula {
					cell, _ := excelize.CoordinatesToCellName(ci+1, ri+1)
					if f, _ := x.GetCellFormula(sh, cell); f != "" {
						t.Errorf("relatorio.xlsx %s!%s is a formula %q", sh, cell, f)
					}
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("relatorio.xlsx does not hold the formula name as text")
	}
	browserCheckConsole(t, rec)

	// the same run seen over plain HTTP, as another program would
	c := login(t, srv, "admin", adminTestPassword)
	r := c.get(runPath)
	if strings.Contains(r.Body, xssScript) || strings.Contains(r.Body, xssImg) {
		t.Errorf("the run page's HTML holds a payer's name as markup")
	}
}
