package reports

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

// xmlAttrs parses the page as XML (it is written well-formed for this) and
// returns, for every element, its name and attributes.
func xmlAttrs(t *testing.T, page []byte) []xml.StartElement {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = true
	var out []xml.StartElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("HTML is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			out = append(out, se.Copy())
		}
	}
}

func attr(se xml.StartElement, name string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func renderPage(t *testing.T, r *results.Results, opt Options) []byte {
	t.Helper()
	opt.Now = fixedNow
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, opt); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestHTMLCarnets(t *testing.T) {
	page := renderPage(t, carnetFixture(), Options{})
	els := xmlAttrs(t, page)
	s := string(page)

	// totals, as cents, against the hand-worked fixture totals
	want := map[string]string{
		"data-total-in": "124690", "data-rows-in": "4",
		"data-total-issued": "54690", "data-rows-issued": "2",
		"data-total-refused": "50000", "data-rows-refused": "1",
		"data-total-denied": "20000", "data-rows-denied": "1",
		"data-total-ambiguous": "0", "data-total-pending": "0",
	}
	var totals *xml.StartElement
	for i := range els {
		if _, ok := attr(els[i], "data-total-in"); ok {
			totals = &els[i]
		}
	}
	if totals == nil {
		t.Fatal("no totals table with data-total-in")
	}
	for k, v := range want {
		if got, _ := attr(*totals, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// month bars and split rows
	months := map[string]string{}
	split := map[string]string{}
	problems := 0
	for _, e := range els {
		m, okm := attr(e, "data-month")
		c, _ := attr(e, "data-cents")
		if rc, ok := attr(e, "data-recipient"); ok && okm {
			split[rc+"|"+m] = c
		} else if okm && e.Name.Local == "g" {
			months[m] = c
		}
		if _, ok := attr(e, "data-source-row"); ok {
			problems++
		}
	}
	for m, c := range map[string]string{"2026-01": "22345", "2026-02": "22345", "2026-03": "10000"} {
		if months[m] != c {
			t.Errorf("month bar %s = %q, want %s", m, months[m], c)
		}
	}
	if len(months) != 3 {
		t.Errorf("month bars %v", months)
	}
	if got := split[payeeAgent+"|2026-01"]; got != "5586" {
		t.Errorf("agent share 2026-01 = %q, want 5586", got)
	}
	if got := split[payeeOwn+"|2026-03"]; got != "7500" {
		t.Errorf("own share 2026-03 = %q, want 7500 (%v)", got, split)
	}
	if problems != 2 {
		t.Errorf("%d problem rows, want 2", problems)
	}
	for _, text := range []string{
		`class="banner service_production"`, "PRODUÇÃO — cobranças reais", "Totais conferem ao centavo",
		"R$ 1.246,90", "R$ 546,90", "R$ 223,45", "jan/2026", "Pedro Álvares",
		"Encurte a mensagem do carnê para até 80 caracteres.", "111.111.111-11", "@media print",
		`<td class="nowrap" data-label="Chave">C-003</td>`, // a key never breaks at its hyphen (seen in Chromium)
	} {
		if !strings.Contains(s, text) {
			t.Errorf("page lacks %q", text)
		}
	}
	// self-contained: no scripts, no external resources
	for _, bad := range []string{"<script", "src=", "<link", "@import", "url(", "@font-face"} {
		if strings.Contains(strings.ToLower(s), bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := strings.Count(s, "<svg"); n != 3 {
		t.Errorf("%d charts, want 3 (outcomes, months, split)", n)
	}
}

func TestHTMLEscapesAndBanners(t *testing.T) {
	page := string(renderPage(t, boletoFixture(), Options{}))
	xmlAttrs(t, []byte(page))
	if strings.Contains(page, "<script>alert(1)</script>") {
		t.Error("problem value not escaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("escaped value missing")
	}
	if !strings.Contains(page, "SERVIÇO EMBUTIDO (local) — nenhum valor real") {
		t.Error("embedded banner missing")
	}
	if !strings.Contains(page, `data-outcome="ambiguous" data-rows="1" data-cents="7890"`) {
		t.Error("ambiguous tally missing")
	}
	sb := string(renderPage(t, cobvFixture(), Options{Lang: "en"}))
	xmlAttrs(t, []byte(sb))
	for _, text := range []string{`lang="en"`, "SANDBOX — no real money", "Totals reconcile to the cent", "R$ 1,175.49", "Feb 2026", "denied by the service"} {
		if !strings.Contains(sb, text) {
			t.Errorf("english page lacks %q", text)
		}
	}
	if strings.Contains(sb, "Totais") {
		t.Error("english page has Portuguese labels")
	}
}

func TestHTMLReconciliationDifference(t *testing.T) {
	r := boletoFixture()
	r.Totals.In.AmountCents += 250 // a run stage bug: R$ 2,50 unaccounted for
	r.Totals.In.Rows++
	page := string(renderPage(t, r, Options{}))
	if !strings.Contains(page, "Totais NÃO conferem — diferença: 1 linha, R$ 2,50") {
		t.Errorf("difference not shown:\n%s", regexp.MustCompile(`(?s)class="check.*?</div>`).FindString(page))
	}
	if !strings.Contains(page, `data-reconciles="false"`) {
		t.Error("data-reconciles should be false")
	}
}

func TestHTMLIncompleteRun(t *testing.T) {
	r := cobvFixture()
	r.Run.Complete = false
	r.Rows[4].Outcome = results.Pending
	r.Compute()
	page := string(renderPage(t, r, Options{}))
	if !strings.Contains(page, "Execução incompleta") {
		t.Error("incomplete warning missing")
	}
	if !strings.Contains(page, `data-total-pending="99999"`) {
		t.Error("pending total missing")
	}
	if got := strings.Count(page, "data-source-row="); got != 3 {
		t.Errorf("%d problem lines, want 3 (2 denied + 1 pending)", got)
	}
}

func TestMoneyFormats(t *testing.T) {
	for _, c := range []struct {
		cents  int64
		pt, en string
	}{
		{0, "R$ 0,00", "R$ 0.00"},
		{5, "R$ 0,05", "R$ 0.05"},
		{123456, "R$ 1.234,56", "R$ 1,234.56"},
		{100000000, "R$ 1.000.000,00", "R$ 1,000,000.00"},
		{-100, "-R$ 1,00", "-R$ 1.00"},
	} {
		if got := formatMoney("pt", c.cents); got != c.pt {
			t.Errorf("pt %d = %q, want %q", c.cents, got, c.pt)
		}
		if got := formatMoney("en", c.cents); got != c.en {
			t.Errorf("en %d = %q, want %q", c.cents, got, c.en)
		}
	}
	if got := plainDecimal(-5, ','); got != "-0,05" {
		t.Errorf("plainDecimal(-5) = %q", got)
	}
	if got := shortMoney("pt", 1234567_89); got != "R$ 1,2 mi" {
		t.Errorf("shortMoney = %q", got)
	}
	if got := formatMonth("pt", "2026-12"); got != "dez/2026" {
		t.Errorf("formatMonth = %q", got)
	}
	if got := formatTimestamp("pt", "2026-01-05T12:00:00Z"); got != "05/01/2026 09:00:00 (horário de Brasília)" {
		t.Errorf("formatTimestamp = %q", got)
	}
	if got := formatTimestamp("en", "2026-01-05T12:00:00.5Z"); got != "2026-01-05 09:00:00 (UTC-3)" {
		t.Errorf("formatTimestamp en = %q", got)
	}
}

func TestLabelsComplete(t *testing.T) {
	for k, l := range labels {
		if l.pt == "" || l.en == "" {
			t.Errorf("label %q lacks a translation", k)
		}
	}
	for _, cols := range [][]column{linesColumns, parcelsColumns, problemsColumns, summaryColumns} {
		for _, c := range cols {
			if _, ok := labels[c.key]; !ok {
				t.Errorf("column %q has no label", c.key)
			}
		}
	}
}

// monthChartTexts returns, for each month bar of the page, how many text
// elements it has (the value above the bar, the month under it) and whether
// the month label is turned.
func monthChartTexts(t *testing.T, page []byte) (texts map[string]int, turned map[string]bool) {
	t.Helper()
	texts, turned = map[string]int{}, map[string]bool{}
	dec := xml.NewDecoder(bytes.NewReader(page))
	month := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts, turned
		}
		if err != nil {
			t.Fatalf("HTML is not well-formed: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if m, ok := attr(e, "data-month"); ok && e.Name.Local == "g" {
				month = m
			} else if e.Name.Local == "text" && month != "" {
				texts[month]++
				if tr, _ := attr(e, "transform"); strings.HasPrefix(tr, "rotate(") {
					turned[month] = true
				}
			}
		case xml.EndElement:
			if e.Name.Local == "g" {
				month = ""
			}
		}
	}
}

// TestHTMLMonthChartLabelsDoNotOverlap: with twelve months of R$ 42.327,75
// the value labels ("R$ 42,3 mil", ~77px) would overlap in 58px slots (seen
// in Chromium on samples/escola), so they are left to the table and the
// month labels turn; with three months both fit and stay.
func TestHTMLMonthChartLabelsDoNotOverlap(t *testing.T) {
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Carnets, "embedded")}
	for m := 1; m <= 12; m++ {
		r.Rows = append(r.Rows, results.Row{Index: m - 1, SourceRow: m + 1, Key: "K" + strconv.Itoa(m), Outcome: results.Issued,
			AmountCents: 4232775, DueDate: fmt.Sprintf("2026-%02d-10", m)})
	}
	r.Compute()
	texts, turned := monthChartTexts(t, renderPage(t, r, Options{}))
	if len(texts) != 12 {
		t.Fatalf("%d month bars, want 12", len(texts))
	}
	for m, n := range texts {
		if n != 1 || !turned[m] {
			t.Errorf("12 months: %s has %d labels (turned %v), want only its month label, turned", m, n, turned[m])
		}
	}
	texts, turned = monthChartTexts(t, renderPage(t, carnetFixture(), Options{}))
	for _, m := range []string{"2026-01", "2026-02", "2026-03"} {
		if texts[m] != 2 || turned[m] {
			t.Errorf("3 months: %s has %d labels (turned %v), want value and month, level", m, texts[m], turned[m])
		}
	}
}
