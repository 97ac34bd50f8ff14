package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"remessa/formats"
)

// TestValidationRowReadRefused: a CSV row the reader refuses whole (four
// fields under a header of five) is a row of the check like any other: it
// is listed at its line with its problem, and the rows after it keep theirs
// (the next row's bad CPF is marked on that row, not on the one after it;
// the refused row used to vanish and pass its problem to the next row).
func TestValidationRowReadRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	csv := "Código;Nome;CPF;Valor;Vencimento\n" +
		"A1;Ana Souza;52998224725;10,00;10/02/2027\n" +
		"A2;Bia Lima;10,00;10/02/2027\n" + // line 3: a field short
		"A3;Caio Reis;52998224724;10,00;10/02/2027\n" + // line 4: wrong check digit
		"A4;Davi Melo;52998224725;10,00;10/02/2027\n"
	r := c.postMultipart("/remessas", url.Values{"kind": {"boletos"}, "account": {"1"}}, upload{Field: "planilha", Name: "boletos.csv", Data: []byte(csv)})
	base := strings.TrimSuffix(r.URL.Path, "/colunas")
	c.postForm(base+"/colunas", nil)
	r = c.postForm(base+"/configuracao", url.Values{"name": {"Boletos"}, "on_invalid": {"skip"}})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("settings: %d at %s: %s", r.Status, r.URL.Path, visibleText(r.Body))
	}
	rows := regexp.MustCompile(`<tr class="(row-bad)?" data-row="(\d+)">`).FindAllStringSubmatch(r.Body, -1)
	var got []string
	for _, m := range rows {
		got = append(got, m[2]+map[bool]string{true: " bad", false: ""}[m[1] != ""])
	}
	if want := "2, 3 bad, 4 bad, 5"; strings.Join(got, ", ") != want {
		t.Errorf("the table's rows: %q, want %s", strings.Join(got, ", "), want)
	}
	row := func(n string) string {
		i := strings.Index(r.Body, `data-row="`+n+`"`)
		if i < 0 {
			return ""
		}
		j := strings.Index(r.Body[i:], "</tr>")
		return r.Body[i : i+j]
	}
	if !strings.Contains(row("3"), "a linha tem 4 campos, mas o cabeçalho tem 5") {
		t.Errorf("line 3 lacks its problem: %s", visibleText(row("3")))
	}
	if !strings.Contains(row("4"), `class="bad"`) || !strings.Contains(row("4"), "52998224724") {
		t.Errorf("line 4's CPF is not marked: %s", visibleText(row("4")))
	}
	if strings.Contains(row("5"), "bad") {
		t.Errorf("line 5 carries a problem it does not have: %s", visibleText(row("5")))
	}
}

// TestCNABCellWords: a CNAB title's fields in the check's table are shown
// as read and in words: the movement by its name, money in reais, a
// discount's code as what it means, a CPF without the field's zeros.
func TestCNABCellWords(t *testing.T) {
	t.Parallel()
	at := "3:1-2"
	for _, c := range []struct {
		cell   formats.Cell
		header string
		want   string
	}{
		{formats.Cell{Value: "01", Raw: "01", Kind: formats.KindText, Column: at}, formats.CNABMovement, "entrada de título (01)"},
		{formats.Cell{Value: "1234.5", Raw: "000000000123450", Kind: formats.KindNumber, Column: at}, formats.CNABValue, "R$ 1.234,50"},
		{formats.Cell{Value: "1|2027-02-01|5.00", Kind: formats.KindText, Column: at}, formats.CNABDiscount1, "R$ 5,00 até 01/02/2027"},
		{formats.Cell{Value: "2|2027-02-01|2.50", Kind: formats.KindText, Column: at}, formats.CNABDiscount2, "2,50% até 01/02/2027"},
		{formats.Cell{Value: "3||0.30", Kind: formats.KindText, Column: at}, formats.CNABDiscountDay, "R$ 0,30 por dia de antecipação"},
		{formats.Cell{Value: "52998224725", Raw: "000052998224725", Kind: formats.KindText, Column: at}, formats.CNABDocument, "52998224725"},
		{formats.Cell{Value: "2027-02-10", Kind: formats.KindDate, Column: at}, formats.CNABDue, "10/02/2027"},
		// a sheet's cell stays as typed
		{formats.Cell{Value: "52998224725", Raw: "529.982.247-25", Kind: formats.KindText, Column: "C"}, "CPF", "529.982.247-25"},
	} {
		if got := displayCell(c.cell, c.header); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.header, c.cell.Value, got, c.want)
		}
	}
}
