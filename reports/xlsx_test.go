package reports

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

func openXLSX(t *testing.T, b []byte) *excelize.File {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("excelize cannot open the report: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func numFmt(t *testing.T, f *excelize.File, sheet, ref string) (int, string) {
	t.Helper()
	id, err := f.GetCellStyle(sheet, ref)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	custom := ""
	if st.CustomNumFmt != nil {
		custom = *st.CustomNumFmt
	}
	return st.NumFmt, custom
}

func raw(t *testing.T, f *excelize.File, sheet, ref string) string {
	t.Helper()
	v, err := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// excelSerial is the 1900-system serial of a civil date: days since
// 1899-12-30 (Excel's day 0 after its 1900 leap-year quirk).
func excelSerial(y int, m time.Month, d int) string {
	days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)).Hours() / 24
	return strconv.Itoa(int(days))
}

func TestXLSXCarnets(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteXLSX(&buf, carnetFixture(), Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	f := openXLSX(t, buf.Bytes())
	if got, want := f.GetSheetList(), []string{"Resumo", "Linhas", "Parcelas", "Problemas"}; !slices.Equal(got, want) {
		t.Fatalf("sheets %v, want %v", got, want)
	}

	rows, err := f.GetRows("Linhas")
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []string{"Linha", "Chave", "Pagador", "CPF/CNPJ", "Resultado", "Valor", "Vencimento", "custom_id", "carnet_id",
		"charge_ids", "txid", "Lote", "Link", "PDF", "Capa", "Linha digitável", "Código de barras", "Pix Copia e Cola",
		"Location Pix", "Código do erro", "Erro"}
	if !slices.Equal(rows[0], wantHeader) {
		t.Fatalf("Linhas header\n got %q\nwant %q", rows[0], wantHeader)
	}
	if len(rows) != 5 {
		t.Fatalf("Linhas has %d rows, want header + 4", len(rows))
	}
	// source row: a number
	if typ, _ := f.GetCellType("Linhas", "A2"); typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
		t.Errorf("A2 type %v, want number", typ)
	}
	if v := raw(t, f, "Linhas", "A2"); v != "2" {
		t.Errorf("A2 = %q, want 2", v)
	}
	// CPF: text, leading zero kept, text format "@" (49)
	if v := raw(t, f, "Linhas", "D2"); v != "01234567890" {
		t.Errorf("CPF D2 = %q, want 01234567890", v)
	}
	if typ, _ := f.GetCellType("Linhas", "D2"); typ != excelize.CellTypeInlineString && typ != excelize.CellTypeSharedString {
		t.Errorf("CPF D2 type %v, want a string", typ)
	}
	if id, _ := numFmt(t, f, "Linhas", "D2"); id != 49 {
		t.Errorf("CPF D2 number format %d, want 49 (@)", id)
	}
	// money: a number in reais with the currency format
	if v := raw(t, f, "Linhas", "F2"); v != "300" {
		t.Errorf("F2 = %q, want 300 (R$ 300,00)", v)
	}
	if v := raw(t, f, "Linhas", "F3"); v != "246.9" {
		t.Errorf("F3 = %q, want 246.9", v)
	}
	if _, custom := numFmt(t, f, "Linhas", "F2"); custom != `"R$" #,##0.00;-"R$" #,##0.00` {
		t.Errorf("F2 format %q, want the R$ currency format", custom)
	}
	// due date: a serial with dd/mm/yyyy
	if v := raw(t, f, "Linhas", "G2"); v != excelSerial(2026, 1, 10) {
		t.Errorf("G2 = %q, want serial %s for 2026-01-10", v, excelSerial(2026, 1, 10))
	}
	if _, custom := numFmt(t, f, "Linhas", "G2"); custom != "dd/mm/yyyy" {
		t.Errorf("G2 format %q, want dd/mm/yyyy", custom)
	}
	if v, _ := f.GetCellValue("Linhas", "G2"); v != "10/01/2026" {
		t.Errorf("G2 shows %q, want 10/01/2026", v)
	}
	if v := raw(t, f, "Linhas", "J2"); v != "550001 550002 550003" {
		t.Errorf("charge_ids J2 = %q", v)
	}
	if v := raw(t, f, "Linhas", "T4"); v != "cpf_invalido" {
		t.Errorf("error code T4 = %q", v)
	}
	if v := raw(t, f, "Linhas", "U4"); v != "C (CPF): CPF inválido: dígitos verificadores não conferem" {
		t.Errorf("error U4 = %q", v)
	}
	// the money column sums to the total in (R$ 1.246,90)
	var sum float64
	for r := 2; r <= 5; r++ {
		v, _ := strconv.ParseFloat(raw(t, f, "Linhas", "F"+strconv.Itoa(r)), 64)
		sum += v
	}
	if math.Abs(sum-1246.90) > 1e-9 {
		t.Errorf("sum of Valor = %v, want 1246.90", sum)
	}

	// frozen header and a table (autofilter) over the data
	panes, err := f.GetPanes("Linhas")
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("Linhas panes %+v %v, want frozen first row", panes, err)
	}
	tables, err := f.GetTables("Linhas")
	if err != nil || len(tables) != 1 || tables[0].Range != "A1:U5" {
		t.Errorf("Linhas tables %+v %v, want one over A1:U5", tables, err)
	}
	if w, _ := f.GetColWidth("Linhas", "C"); w < 20 {
		t.Errorf("payer column width %v, want a readable width", w)
	}

	// Parcelas: 5 parcels summing to the issued R$ 546,90
	prows, _ := f.GetRows("Parcelas")
	if len(prows) != 6 {
		t.Fatalf("Parcelas has %d rows, want header + 5", len(prows))
	}
	sum = 0
	for r := 2; r <= 6; r++ {
		v, _ := strconv.ParseFloat(raw(t, f, "Parcelas", "H"+strconv.Itoa(r)), 64)
		sum += v
	}
	if math.Abs(sum-546.90) > 1e-9 {
		t.Errorf("sum of parcels = %v, want 546.90", sum)
	}
	if v := raw(t, f, "Parcelas", "G4"); v != excelSerial(2026, 3, 10) {
		t.Errorf("third parcel due %q, want 2026-03-10", v)
	}
	if v := raw(t, f, "Parcelas", "P2"); v != "25" {
		t.Errorf("first parcel split to recipients %q, want 25 (R$ 25,00)", v)
	}

	// Problemas: the refused and the denied row, with what to do
	pr, _ := f.GetRows("Problemas")
	if len(pr) != 3 {
		t.Fatalf("Problemas has %d rows, want header + 2", len(pr))
	}
	if pr[1][0] != "4" || pr[1][6] != "cpf_invalido" || pr[1][12] == "" {
		t.Errorf("first problem %q", pr[1])
	}
	if pr[2][6] != "3500034" || pr[2][12] != "Encurte a mensagem do carnê para até 80 caracteres." {
		t.Errorf("second problem %q", pr[2])
	}

	// Resumo: the production banner and the reconciliation sentence
	srows, _ := f.GetRows("Resumo")
	var flat []string
	for _, r := range srows {
		flat = append(flat, r...)
	}
	for _, want := range []string{"PRODUÇÃO — cobranças reais", "Totais conferem ao centavo", "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea",
		"2026-03", payeeAgent, payeeOwn + " (conta emissora)"} {
		if !slices.Contains(flat, want) {
			t.Errorf("Resumo lacks %q", want)
		}
	}
	// the totals block: find "emitida" and check rows and amount
	for i, r := range srows {
		if len(r) >= 3 && r[0] == "emitida" {
			ref := "C" + strconv.Itoa(i+1)
			if v := raw(t, f, "Resumo", ref); v != "546.9" {
				t.Errorf("Resumo issued amount %q, want 546.9", v)
			}
			if r[1] != "2" {
				t.Errorf("Resumo issued rows %q, want 2", r[1])
			}
		}
	}
}

func TestXLSXEnglishAndNoParcels(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteXLSX(&buf, cobvFixture(), Options{Lang: "en", Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	f := openXLSX(t, buf.Bytes())
	if got, want := f.GetSheetList(), []string{"Summary", "Rows", "Problems"}; !slices.Equal(got, want) {
		t.Fatalf("sheets %v, want %v", got, want)
	}
	rows, _ := f.GetRows("Rows")
	if rows[0][4] != "Outcome" || rows[2][4] != "denied by the service" {
		t.Errorf("english labels: %q / %q", rows[0][4], rows[2][4])
	}
	if v := raw(t, f, "Rows", "F5"); v != "0.01" {
		t.Errorf("one cent shows %q, want 0.01", v)
	}
}

func TestXLSXLongTableGoesOnInMoreSheets(t *testing.T) {
	defer func(n int) { xlsxMaxRows = n }(xlsxMaxRows)
	xlsxMaxRows = 3 // header + 2 rows per sheet
	var buf bytes.Buffer
	if err := WriteXLSX(&buf, carnetFixture(), Options{}); err != nil {
		t.Fatal(err)
	}
	f := openXLSX(t, buf.Bytes())
	want := []string{"Resumo", "Linhas", "Parcelas", "Problemas", "Parcelas (2)", "Parcelas (3)", "Linhas (2)"} // parts are added as they fill
	if got := f.GetSheetList(); !slices.Equal(got, want) {
		t.Fatalf("sheets %v, want %v", got, want)
	}
	var keys []string
	for _, s := range []string{"Parcelas", "Parcelas (2)", "Parcelas (3)"} {
		rows, _ := f.GetRows(s)
		if rows[0][0] != "Linha" {
			t.Errorf("%s has no header: %q", s, rows[0])
		}
		for _, r := range rows[1:] {
			keys = append(keys, r[1]+"/"+r[4])
		}
	}
	if want := []string{"C-001/1", "C-001/2", "C-001/3", "C-002/1", "C-002/2"}; !slices.Equal(keys, want) {
		t.Errorf("parcels across sheets %v, want %v", keys, want)
	}
}
