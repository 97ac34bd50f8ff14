package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/xuri/excelize/v2"
)

// brokenAlunos writes the school's sheet with two rows broken: row 3's CPF
// with a wrong check digit and row 6's Mensalidade empty.
func brokenAlunos(t *testing.T, dir string) string {
	t.Helper()
	f, err := excelize.OpenFile("../samples/escola/alunos.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet := f.GetSheetName(f.GetActiveSheetIndex())
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) string {
		for i, h := range rows[0] {
			if h == name {
				c, _ := excelize.ColumnNumberToName(i + 1)
				return c
			}
		}
		t.Fatalf("sample has no %q column: %v", name, rows[0])
		return ""
	}
	cpf := col("CPF")
	v, _ := f.GetCellValue(sheet, cpf+"3")
	last := v[len(v)-1]
	wrong := byte('0' + (last-'0'+1)%10)
	if err := f.SetCellStr(sheet, cpf+"3", v[:len(v)-1]+string(wrong)); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCellValue(sheet, col("Mensalidade")+"6", ""); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "alunos.xlsx")
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// fetchBytes fetches path in the page (with the browser's session) and
// returns the status, the Content-Type and the body.
func fetchBytes(t *testing.T, ctx context.Context, path string) (int, string, []byte) {
	t.Helper()
	type res struct {
		Status int    `json:"status"`
		Type   string `json:"type"`
		Body   string `json:"body"`
	}
	r, err := chromedp.Run(ctx, chromedp.Evaluate[res](`fetch(`+jsString(path)+`).then(async r => {
		const b = new Uint8Array(await r.arrayBuffer()); let s = "";
		for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192));
		return {status: r.status, type: r.headers.get("content-type") || "", body: btoa(s)};
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("fetch %s: %v", path, err)
	}
	b, err := base64.StdEncoding.DecodeString(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r.Status, r.Type, b
}

// TestBrowserSecretary is the school secretary's whole morning, in a real
// browser: sign in, get the template, upload the sheet with two broken
// rows, see both cells marked with their messages, download the refused
// rows, upload the fixed sheet, plan, run on the embedded service, watch
// the progress reach the end, open the report and a carnet PDF of 12
// parcels. Every step is photographed at 1280 and 390 px.
func TestBrowserSecretary(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	if _, err := srv.createUser(context.Background(), "secretaria", "Secretaria Escola Aquarela", "senha-da-secretaria", RoleOperator); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "secretaria", "senha-da-secretaria")
	// every step at a laptop's width and a phone's (the page as it is:
	// a step's address later leads to the run)
	step := func(name string) {
		t.Helper()
		browserBothWidths(t, ctx, "a-"+name)
	}
	step("01-inicio")

	browserClick(t, ctx, "a.btn[href='/remessas/nova']")
	step("02-nova")
	status, ctype, tpl := fetchBytes(t, ctx, "/modelos/carnets")
	if status != 200 || !strings.Contains(ctype, "spreadsheetml") || !bytes.HasPrefix(tpl, []byte("PK")) {
		t.Fatalf("template download: %d %s %q", status, ctype, tpl[:min(4, len(tpl))])
	}
	if x, err := excelize.OpenReader(bytes.NewReader(tpl)); err != nil {
		t.Fatalf("template is not a workbook: %v", err)
	} else {
		x.Close()
	}

	broken := brokenAlunos(t, t.TempDir())
	browserTap(t, ctx, "input[name=kind][value=carnets]")
	browserUpload(t, ctx, "input[name=planilha]", broken)
	browserClick(t, ctx, "form[action='/remessas'] button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/colunas") {
		t.Fatalf("after upload at %s: %s", p, browserText(t, ctx, "main"))
	}
	step("03-colunas")
	base := strings.TrimSuffix(browserPath(t, ctx), "/colunas")
	browserClick(t, ctx, "main form button.btn")
	step("04-configuracao")
	browserType(t, ctx, "input[name=due]", "dia 10 do próximo mês")
	browserClick(t, ctx, "main form button.btn")
	if p := browserPath(t, ctx); p != base+"/validacao" {
		t.Fatalf("after settings at %s: %s", p, browserText(t, ctx, "main"))
	}
	step("05-validacao-com-erros")
	if got := browserText(t, ctx, "[data-count=refused]"); got != "2" {
		t.Fatalf("refused count %q, want 2", got)
	}
	bad := browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll("td.bad")).map(td => td.closest("tr").dataset.row + ": " + td.innerText)`)
	if len(bad) != 2 {
		t.Fatalf("%d cells marked bad, want 2: %q", len(bad), bad)
	}
	if !strings.HasPrefix(bad[0], "3: ") || !strings.Contains(strings.ToLower(bad[0]), "cpf") {
		t.Errorf("row 3's CPF cell should carry the CPF message: %q", bad[0])
	}
	if !strings.HasPrefix(bad[1], "6: ") || !strings.Contains(strings.ToLower(bad[1]), "valor") {
		t.Errorf("row 6's Mensalidade cell should carry the value message: %q", bad[1])
	}
	status, _, rej := fetchBytes(t, ctx, base+"/recusadas")
	if status != 200 {
		t.Fatalf("refused rows download: %d", status)
	}
	x, err := excelize.OpenReader(bytes.NewReader(rej))
	if err != nil {
		t.Fatalf("refused rows are not a workbook: %v", err)
	}
	rrows, _ := x.GetRows(x.GetSheetName(0))
	x.Close()
	if len(rrows) != 3 || rrows[0][len(rrows[0])-1] != "Problema" {
		t.Fatalf("refused rows file: %d rows, header %q; want the header and 2 rows with Problema", len(rrows), rrows[0])
	}

	browserUpload(t, ctx, "form[action$='/planilha'] input[type=file]", "../samples/escola/alunos.xlsx")
	browserClick(t, ctx, "form[action$='/planilha'] button")
	if got := browserText(t, ctx, "[data-count=refused]"); got != "0" {
		t.Fatalf("after the fixed sheet refused %q, want 0", got)
	}
	step("06-validacao-ok")
	browserClick(t, ctx, "a.btn[href$='/plano']")
	step("07-plano")
	if got := browserText(t, ctx, "[data-count=accepted]"); got != "40" {
		t.Fatalf("plan issues %q, want 40", got)
	}
	browserClick(t, ctx, "#confirmar")
	if !strings.HasPrefix(browserPath(t, ctx), "/execucoes/") {
		t.Fatalf("after confirming at %s", browserPath(t, ctx))
	}
	step("08-execucao")
	browserWait(t, ctx, ".badge.done")
	runPath := browserPath(t, ctx)
	if got := browserText(t, ctx, "[data-k=done]"); got != "40" {
		t.Errorf("progress ended at %q, want 40", got)
	}
	step("09-resultado")
	status, _, report := fetchBytes(t, ctx, runPath+"/relatorio")
	if status != 200 || !bytes.Contains(report, []byte("conferem")) {
		t.Fatalf("report: %d, reconciles: %v", status, bytes.Contains(report, []byte("conferem")))
	}
	status, ctype, pdf := fetchBytes(t, ctx, runPath+"/documento/0")
	if status != 200 || ctype != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF")) {
		t.Fatalf("carnet PDF: %d %s", status, ctype)
	}
	// a cover and 12 parcels three to a page: 5 pages, a QR code per parcel
	if n := bytes.Count(pdf, []byte("/Type /Page\n")); n != 5 {
		t.Errorf("carnet PDF has %d pages, want 5 (cover + 12 parcels, 3 a page)", n)
	}
	// after the run: "Atualizar situação" asks the service and shows the reconciliation
	browserClick(t, ctx, "form[action$='/situacao'] button")
	if got := browserText(t, ctx, "[data-sit=expected]"); got != "R$ 507.933,00" {
		t.Errorf("the status shows %q issued, want R$ 507.933,00", got)
	}
	if !strings.Contains(browserText(t, ctx, "#situacao"), "Totais conferem ao centavo") {
		t.Errorf("the status section does not say the totals reconcile")
	}
	step("10-situacao")
	browserCheckConsole(t, rec)
}
