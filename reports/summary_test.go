package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

// identityFixture is the carnet fixture with its input hash recorded.
func identityFixture(service string) *results.Results {
	r := carnetFixture()
	r.Run.Service = service
	r.Run.InputSHA256 = "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"
	return r
}

// TestSummaryRunIdentityEveryFormat: the run's identity (job, run id,
// service, account, operator, start and end, version, both SHA-256s) is in
// the XLSX Resumo, resumo.csv and the HTML page, each value next to its own
// label, with the banner coloured by service in the workbook.
func TestSummaryRunIdentityEveryFormat(t *testing.T) {
	jobSHA := "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"
	inSHA := "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"
	human := map[string]string{ // label → value, as a person reads them
		"Trabalho": "Mensalidades 2026", "Execução (id)": "20260105T120000Z-7f3a",
		"Serviço": "PRODUÇÃO — cobranças reais", "Tipo": "carnês", "Conta (payee_code)": payeeOwn,
		"Operador": "ana.souza", "Início": "05/01/2026 09:00:00 (horário de Brasília)",
		"Fim": "05/01/2026 09:03:27 (horário de Brasília)", "Versão do remessa": "v0.9.0",
		"Arquivo do trabalho": "jobs/mensalidades.yaml", "SHA-256 do trabalho": jobSHA,
		"Planilha de entrada": "pagadores.xlsx", "SHA-256 da entrada": inSHA,
	}

	// XLSX: label in A, value in B; the banner in A2, red for production
	var buf bytes.Buffer
	if err := WriteXLSX(&buf, identityFixture("production"), Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	f := openXLSX(t, buf.Bytes())
	rows, _ := f.GetRows("Resumo")
	got := map[string]string{}
	for _, r := range rows {
		if len(r) == 2 {
			got[r[0]] = r[1]
		}
	}
	for k, v := range human {
		if got[k] != v {
			t.Errorf("Resumo %q = %q, want %q", k, got[k], v)
		}
	}
	if v, _ := f.GetCellValue("Resumo", "A2"); v != "PRODUÇÃO — cobranças reais" {
		t.Errorf("Resumo A2 = %q, want the production banner", v)
	}
	for service, fill := range map[string]string{"production": "C00000", "sandbox": "FFC000", "embedded": "2F75B5"} {
		buf.Reset()
		if err := WriteXLSX(&buf, identityFixture(service), Options{Now: fixedNow}); err != nil {
			t.Fatal(err)
		}
		g := openXLSX(t, buf.Bytes())
		id, _ := g.GetCellStyle("Resumo", "A2")
		st, err := g.GetStyle(id)
		if err != nil || len(st.Fill.Color) != 1 || !strings.EqualFold(st.Fill.Color[0], fill) {
			t.Errorf("%s banner fill %+v (%v), want %s", service, st.Fill, err, fill)
		}
	}

	// resumo.csv: raw values by field name
	buf.Reset()
	if err := WriteCSV(&buf, FileSummaryCSV, identityFixture("production"), Options{CSVDialect: DialectComma}); err != nil {
		t.Fatal(err)
	}
	raw := map[string]string{}
	for _, rec := range readCSV(t, buf.Bytes(), ',')[1:] {
		if rec[0] == "execucao" {
			raw[rec[1]] = rec[5]
		}
	}
	for k, v := range map[string]string{"job_name": "Mensalidades 2026", "run_id": "20260105T120000Z-7f3a", "service": "production",
		"kind": "carnets", "account": payeeOwn, "operator": "ana.souza", "started_at": "2026-01-05T12:00:00Z",
		"finished_at": "2026-01-05T12:03:27Z", "version": "v0.9.0", "job_sha256": jobSHA, "input_sha256": inSHA} {
		if raw[k] != v {
			t.Errorf("resumo.csv %s = %q, want %q", k, raw[k], v)
		}
	}

	// HTML: dt/dd pairs and the banner's data-service
	page := renderPage(t, identityFixture("production"), Options{})
	dec := xml.NewDecoder(bytes.NewReader(page))
	pairs := map[string]string{}
	var el, dt, banner string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML is not well-formed: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			el = e.Name.Local
			if s, ok := attr(e, "data-service"); ok {
				banner = s
			}
		case xml.CharData:
			switch el {
			case "dt":
				dt = string(e)
			case "dd":
				pairs[dt] = string(e)
			}
		case xml.EndElement:
			el = ""
		}
	}
	for k, v := range human {
		if pairs[k] != v {
			t.Errorf("HTML %q = %q, want %q", k, pairs[k], v)
		}
	}
	if banner != "service_production" {
		t.Errorf("HTML banner data-service %q, want service_production", banner)
	}
}

// TestReconciliationChecksTheRows: totals that close among themselves but
// are not the sums of the rows (a results.json edited by hand, or a run
// bug) do not reconcile: every summary says which total and both sums, and
// Write returns ErrRowsNotTotals after writing every report.
func TestReconciliationChecksTheRows(t *testing.T) {
	r := boletoFixture() // rows: 4, R$ 1.324,46 in; 2 issued, R$ 1.235,56
	r.Totals.In.AmountCents += 100
	r.Totals.Issued.AmountCents += 100
	if ok, _ := r.Totals.Reconciles(); !ok {
		t.Fatal("the doctored totals should close among themselves")
	}
	dir := t.TempDir()
	files, err := Write(dir, r, Options{Now: fixedNow})
	if !errors.Is(err, ErrRowsNotTotals) {
		t.Fatalf("Write: %v, want ErrRowsNotTotals", err)
	}
	if len(files) != 6 { // xlsx, 3 csv (no parcels), json, html
		t.Errorf("files %v, want all 6 written", files)
	}
	want := "Totais NÃO conferem — entrada: as linhas somam 4 linhas, R$ 1.324,46; os totais dizem 4 linhas, R$ 1.325,46"
	page, _ := os.ReadFile(filepath.Join(dir, FileHTML))
	if !strings.Contains(string(page), want) || !strings.Contains(string(page), `data-reconciles="false"`) {
		t.Errorf("HTML lacks %q / data-reconciles=false", want)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, FileSummaryCSV))
	if !strings.Contains(string(sum), "conferencia;reconciles;;;;\""+want+"\"") { // quoted: it has a ;
		t.Errorf("resumo.csv lacks %q:\n%s", want, sum)
	}
	xb, _ := os.ReadFile(filepath.Join(dir, FileXLSX))
	f := openXLSX(t, xb)
	rows, _ := f.GetRows("Resumo")
	found := false
	for _, row := range rows {
		found = found || len(row) == 2 && row[0] == "Conferência" && row[1] == want
	}
	if !found {
		t.Errorf("Resumo lacks %q", want)
	}
	// the same totals from the rows themselves reconcile
	r.Compute()
	if _, err := Write(t.TempDir(), r, Options{Formats: []string{FormatHTML}}); err != nil {
		t.Errorf("computed totals: %v", err)
	}
}

// TestWriteFromFileTruncated: a results.json cut short is unreadable, not
// an empty run with reports that reconcile.
func TestWriteFromFileTruncated(t *testing.T) {
	dir := t.TempDir()
	for _, body := range []string{`{"version":1`, `{"version":1,"run":{"id":"x"}`, `{"version":1,"run":{"id":"x"},"rows":[]`, `{"version":1,"run":{"id":"x"},"rows":[{"outcome":"issued"}`} {
		p := filepath.Join(dir, "results.json")
		os.WriteFile(p, []byte(body), 0o644)
		_, _, err := WriteFromFile(filepath.Join(dir, "out"), p, Options{Formats: []string{FormatCSV}})
		if !errors.Is(err, ErrBadResults) || !strings.Contains(err.Error(), "results.json") {
			t.Errorf("%s: %v, want ErrBadResults naming the file", body, err)
		}
	}
}
