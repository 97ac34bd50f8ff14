package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"remessa/internal/cnabtest"
	"remessa/pipeline/run/runtest"
)

// cnabDeskTitles is the test's own list of the ERP's titles: key, value in
// cents, and whether the title is the bad one (a due date of 31/02/2027).
func cnabDeskTitles() (ts []cnabtest.Title240, keys []string, cents map[string]int64, bad string) {
	cents = map[string]int64{}
	for i := 1; i <= 6; i++ {
		k := fmt.Sprintf("ERP%03d", i)
		c := 15_000 + int64(i)*1_111
		tt := cnabtest.OkTitle(k, c)
		tt.Doc = runtest.CPF(fmt.Sprintf("%09d", 200000000+i*7919))
		if i == 4 {
			tt.RawDueFix = "31022027"
			bad = k
		}
		ts = append(ts, tt)
		keys = append(keys, k)
		cents[k] = c
	}
	return ts, keys, cents, bad
}

// cnabRetornoOccurrences reads a CNAB 240 retorno by FEBRABAN's positions,
// written here from the manual (segment T: 16–17 código de movimento,
// 59–73 número do documento, 82–96 valor nominal, 214–223 motivos of a
// rejection): "KEY OCC CENTS" per title, "KEY 03 MOTIVOS" for a rejected
// one, sorted. Every line must be 240 positions long.
func cnabRetornoOccurrences(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for n, line := range strings.Split(strings.TrimRight(string(body), "\r\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		if len(line) != 240 {
			t.Fatalf("retorno line %d: %d positions, want 240", n+1, len(line))
		}
		if line[7] == '3' && line[13] == 'T' {
			key, occ := strings.TrimSpace(line[58:73]), line[15:17]
			if occ == "03" { // T 214–223: the motivos of a rejection
				out = append(out, fmt.Sprintf("%s %s %s", key, occ, strings.TrimSpace(line[213:223])))
				continue
			}
			out = append(out, fmt.Sprintf("%s %s %s", key, occ, strings.TrimLeft(line[81:96], "0")))
		}
	}
	sort.Strings(out)
	return out
}

// TestBrowserCNABRemessa is a billing clerk's day with the ERP's file, in a
// real browser against the desk with its embedded sandbox: the ERP's CNAB
// 240 remessa of six titles (the fourth with 31/02/2027 as its due date)
// goes through the new-remessa flow like a sheet — upload, the fields at
// their positions instead of columns to match, the settings (leave the bad
// title out), the check, where the bad title's problem names its line and
// positions, the plan, the run — and the run page writes the retorno, which
// the test downloads and reads by the manual's positions: 02 entrada
// confirmada for each good title and 03 entrada rejeitada for the bad one,
// with the test's own values. Every page is photographed at 1280 and 390 px
// and none scrolls sideways on the phone.
func TestBrowserCNABRemessa(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	srv := btServer(t)
	if _, err := srv.createUser(context.Background(), "cobranca", "Faturamento", "senha-da-cobranca", RoleOperator); err != nil {
		t.Fatal(err)
	}
	ts, keys, cents, bad := cnabDeskTitles()
	rem := filepath.Join(t.TempDir(), "COB281101.REM")
	if err := os.WriteFile(rem, []byte(cnabtest.File240(1, ts, "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "cobranca", "senha-da-cobranca")
	step := func(name string) {
		t.Helper()
		browserBothWidths(t, ctx, "cnab-"+name)
		browserFits(t, ctx, name)
		browserFitsAt(t, ctx, 390, name)
	}

	browserClick(t, ctx, "a.btn[href='/remessas/nova']")
	if acc := browserEval[string](t, ctx, `document.querySelector("input[name=planilha]").accept`); !strings.Contains(strings.ToLower(acc), ".rem") {
		t.Errorf("the file picker offers %q: an ERP's .REM file is not among them", acc)
	}
	browserTap(t, ctx, "input[name=kind][value=boletos]")
	browserUpload(t, ctx, "input[name=planilha]", rem)
	browserClick(t, ctx, "form[action='/remessas'] button.btn")
	if p := browserPath(t, ctx); !strings.HasSuffix(p, "/colunas") {
		t.Fatalf("after the upload at %s: %s", p, browserText(t, ctx, "main"))
	}
	base := strings.TrimSuffix(browserPath(t, ctx), "/colunas")
	// a CNAB file has fields at fixed positions: nothing to match, each
	// field shown with where it is in the first title
	if browserHas(t, ctx, "main select") {
		t.Errorf("the columns page of a CNAB file offers to match columns")
	}
	if got := browserText(t, ctx, "main"); !strings.Contains(got, "CNAB 240") || !strings.Contains(got, "posições 63–77") {
		t.Errorf("the columns page does not show the CNAB fields at their positions (Seu número: segment P, 63–77):\n%s", got)
	}
	step("01-colunas")
	browserClick(t, ctx, "main form button.btn")
	if p := browserPath(t, ctx); p != base+"/configuracao" {
		t.Fatalf("after the columns at %s: %s", p, browserText(t, ctx, "main"))
	}
	step("02-configuracao")
	browserSelect(t, ctx, "select[name=on_invalid]", "skip")
	browserClick(t, ctx, "main form button.btn")
	if p := browserPath(t, ctx); p != base+"/validacao" {
		t.Fatalf("after the settings at %s: %s", p, browserText(t, ctx, "main"))
	}
	step("03-conferencia")
	if got := browserText(t, ctx, "[data-count=rows]"); got != "6" {
		t.Errorf("the check counts %s titles, want 6", got)
	}
	if got := browserText(t, ctx, "[data-count=refused]"); got != "1" {
		t.Errorf("the check refuses %s titles, want 1", got)
	}
	// the bad title is the fourth: its P segment is line 3 + 2×3 = 9 (a
	// header, a batch header, then a P and a Q per title); its due date is
	// at positions 78–85
	rows := browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll("table.sheet tbody tr")).map(tr => tr.dataset.row)`)
	if strings.Join(rows, ",") != "3,5,7,9,11,13" {
		t.Errorf("the table's titles are at lines %v, want 3,5,7,9,11,13", rows)
	}
	badRows := browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll("tr.row-bad")).map(tr => tr.dataset.row + ": " + tr.innerText)`)
	want := regexp.MustCompile(`^9: .*linha 9, posições 78–85 \([^)]*[Vv]encimento[^)]*\).*31022027`)
	if len(badRows) != 1 || !want.MatchString(strings.ReplaceAll(badRows[0], "\n", " ")) {
		t.Errorf("the bad title's row: %q, want line 9 with \"linha 9, posições 78–85 (…vencimento…)\"", badRows)
	}
	// the refused titles go back to the ERP in the retorno, not in a sheet
	if browserHas(t, ctx, "a.btn[href$='/recusadas']") {
		t.Errorf("the check of a CNAB remessa offers a sheet of refused rows")
	}
	if status, _, body := fetchBytes(t, ctx, base+"/recusadas"); status != 404 || !strings.Contains(string(body), "volta ao ERP") {
		t.Errorf("refused rows of a CNAB remessa: %d %.200s", status, visibleText(string(body)))
	}
	if h := browserText(t, ctx, "main h1"); h != "Conferência da remessa CNAB" {
		t.Errorf("the check's heading is %q", h)
	}
	// the good titles read as words: the movement by its name, the value
	// in reais, the CPF without the field's zeros
	first := browserText(t, ctx, "table.sheet tbody tr[data-row='3']")
	for _, w := range []string{"entrada de título (01)", "R$ 161,11", "ERP001", "RUA DAS FLORES\t123\tAP 12"} {
		if !strings.Contains(first, w) {
			t.Errorf("the first title's row lacks %q: %q", w, first)
		}
	}
	if strings.Contains(first, "000000000000000") || strings.Contains(first, "0000"+strings.TrimLeft(ts[0].Doc, "0")) {
		t.Errorf("the first title's row shows a field's raw zeros: %q", first)
	}

	browserClick(t, ctx, "a.btn[href$='/plano']")
	step("04-plano")
	if got := browserText(t, ctx, "[data-count=accepted]"); got != "5" {
		t.Fatalf("the plan issues %s, want 5", got)
	}
	browserClick(t, ctx, "#confirmar")
	if !strings.HasPrefix(browserPath(t, ctx), "/execucoes/") {
		t.Fatalf("after confirming at %s", browserPath(t, ctx))
	}
	runPath := browserPath(t, ctx)
	browserWait(t, ctx, "#gerar-retorno")
	browserGo(t, ctx, srv.URL+runPath)
	step("05-execucao")
	if got := browserEval[string](t, ctx, `document.querySelector("#retorno-layout").value`); got != "cnab240" {
		t.Errorf("the retorno's layout is %q by default, want cnab240 (the remessa's)", got)
	}
	// the refused title on the run page: its problem at its positions
	if got := browserText(t, ctx, "tr[data-row='9']"); !strings.Contains(got, "linha 9, posições 78–85") {
		t.Errorf("the run page's refused title: %q, want its problem at line 9, positions 78–85", got)
	}
	browserClick(t, ctx, "#gerar-retorno")
	browserWait(t, ctx, "#retorno tr[data-nsa='1']")
	step("06-retorno")
	// the run's report, in its frame on the run page, reads on a phone
	// without scrolling sideways (its facts were squeezed into a column
	// four letters wide, its tables 560 px wide)
	browserViewport(t, ctx, 390)
	browserWait(t, ctx, "iframe.report")
	over, err := chromedp.Run(ctx, chromedp.Evaluate[int](`new Promise(r => { const f = document.querySelector("iframe.report");
		const measure = () => { const d = f.contentDocument.documentElement; r(d.scrollWidth - d.clientWidth) };
		if (f.contentDocument && f.contentDocument.readyState === "complete") measure(); else f.addEventListener("load", measure) })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("measure the report's frame: %v", err)
	}
	if over > 0 {
		wide, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelector("iframe.report").contentDocument.querySelectorAll("body *"))
			.filter(e => e.getBoundingClientRect().right > document.querySelector("iframe.report").contentWindow.innerWidth).slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().width) + "px")`))
		t.Errorf("the run's report scrolls sideways by %d px in its frame at 390 px: %q", over, wide)
	}
	if got := browserEval[string](t, ctx, `document.querySelector("iframe.report").contentDocument.querySelector("table.problems").innerText`); !strings.Contains(got, "linha 9, posições 78–85 (Data de vencimento do título)") {
		t.Errorf("the report's problems do not say the line and positions: %q", got)
	}
	browserViewport(t, ctx, 1280)
	href := browserEval[string](t, ctx, `document.querySelector("#retorno tr[data-nsa='1'] a[download]").getAttribute("href")`)
	status, _, body := fetchBytes(t, ctx, href)
	if status != 200 {
		t.Fatalf("retorno download %s: %d", href, status)
	}
	// 02 with the title's value for each good title; 03 for the bad one
	// with FEBRABAN's motivo 16 (data de vencimento inválida, table C047)
	// and no value (its fields did not read)
	var wantOcc []string
	for _, k := range keys {
		if k == bad {
			wantOcc = append(wantOcc, k+" 03 16")
			continue
		}
		wantOcc = append(wantOcc, fmt.Sprintf("%s 02 %d", k, cents[k]))
	}
	sort.Strings(wantOcc)
	got := cnabRetornoOccurrences(t, body)
	if strings.Join(got, "\n") != strings.Join(wantOcc, "\n") {
		t.Errorf("the retorno's occurrences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantOcc, "\n"))
	}
	browserCheckConsole(t, rec)
}
