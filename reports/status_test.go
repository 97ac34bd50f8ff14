package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// Every charge status of the charges API (service-spec.md, "States and
// transitions", and the sandbox's own list) has a label in both languages;
// the parcel tables show the label and keep the API's code in a column of
// its own.
func TestParcelStatusLabels(t *testing.T) {
	for _, s := range []string{"new", "waiting", "paid", "unpaid", "refunded", "contested", "canceled", "settled", "link", "expired", "identified", "approved"} {
		pt, en := parcelStatus("pt", s), parcelStatus("en", s)
		if pt == s || pt == "" || en == "" {
			t.Errorf("status %q: pt %q, en %q", s, pt, en)
		}
	}
	for s, want := range map[string][2]string{
		"waiting":  {"aguardando pagamento", "waiting for payment"},
		"paid":     {"pago", "paid"},
		"unpaid":   {"vencido", "overdue"},
		"canceled": {"cancelado", "canceled"},
	} {
		if got := [2]string{parcelStatus("pt", s), parcelStatus("en", s)}; got != want {
			t.Errorf("status %q: %q, want %q", s, got, want)
		}
	}
	// a status the report does not know is shown as the service sent it
	if got := parcelStatus("pt", "brand_new"); got != "brand_new" {
		t.Errorf("unknown status shown as %q", got)
	}
	if got := parcelStatus("pt", ""); got != "" {
		t.Errorf("no status shown as %q", got)
	}
}

func TestParcelStatusInReports(t *testing.T) {
	for _, lang := range []string{"pt", "en"} {
		dir := t.TempDir()
		res := carnetFixture()
		res.Rows[0].Parcels[1].Status = "paid"
		if _, err := Write(dir, res, Options{Lang: lang, Formats: []string{FormatXLSX, FormatCSV}}); err != nil {
			t.Fatal(err)
		}
		wantHead, wantCode := []string{"Situação", "Código da situação"}, []string{"aguardando pagamento", "waiting", "pago", "paid"}
		if lang == "en" {
			wantHead, wantCode = []string{"Status", "Status code"}, []string{"waiting for payment", "waiting", "paid", "paid"}
		}
		b, err := os.ReadFile(filepath.Join(dir, "parcelas.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs := readCSV(t, bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")), ';')
		if recs[0][8] != wantHead[0] || recs[0][9] != wantHead[1] {
			t.Errorf("%s: parcelas.csv headers %q", lang, recs[0])
		}
		if got := []string{recs[1][8], recs[1][9], recs[2][8], recs[2][9]}; strings.Join(got, "|") != strings.Join(wantCode, "|") {
			t.Errorf("%s: parcelas.csv status %q, want %q", lang, got, wantCode)
		}
		f, err := excelize.OpenFile(filepath.Join(dir, "relatorio.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		sheet := "Parcelas"
		if lang == "en" {
			sheet = "Parcels"
		}
		rows, err := f.GetRows(sheet)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rows[0][8] != wantHead[0] || rows[0][9] != wantHead[1] {
			t.Errorf("%s: %s headers %q", lang, sheet, rows[0])
		}
		if got := []string{rows[1][8], rows[1][9], rows[2][8], rows[2][9]}; strings.Join(got, "|") != strings.Join(wantCode, "|") {
			t.Errorf("%s: %s status %q, want %q", lang, sheet, got, wantCode)
		}
	}
}
