package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

func writeResults(t *testing.T, dir string, r *results.Results) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func sampleResults() *results.Results {
	r := &results.Results{Version: results.FileVersion, Run: results.RunInfo{ID: "r1", JobName: "teste", Kind: results.Boletos, Service: "embedded", Complete: true}}
	r.Rows = []results.Row{
		{SourceRow: 2, Key: "k1", PayerName: "Ana", PayerDoc: "01234567890", Outcome: results.Issued, AmountCents: 1000, DueDate: "2026-02-01"},
		{SourceRow: 3, Key: "k2", PayerName: "Bia", PayerDoc: "52998224725", Outcome: results.Refused, AmountCents: 500,
			Problems: []results.Problem{{Code: "cpf_invalido", Message: "CPF inválido"}}},
	}
	r.Compute()
	return r
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	writeResults(t, dir, sampleResults())
	var out, errb bytes.Buffer
	code := dispatch([]string{"report", dir, "--formats", "csv,html", "--csv-dialect", "comma"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errb.String())
	}
	for _, name := range []string{"linhas.csv", "problemas.csv", "resumo.csv", "relatorio.html"} {
		if _, err := os.Stat(filepath.Join(dir, "reports", name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
		if !strings.Contains(out.String(), name) {
			t.Errorf("stdout does not list %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "reports", "relatorio.xlsx")); err == nil {
		t.Error("xlsx written though not asked for")
	}
	// the input file is unknown: a warning, no failure
	if !strings.Contains(errb.String(), "--input") {
		t.Errorf("no warning about the missing input: %q", errb.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "reports", "linhas.csv"))
	if bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")) || !bytes.Contains(b, []byte("10.00")) {
		t.Errorf("comma dialect not used:\n%s", b)
	}

	out2 := filepath.Join(t.TempDir(), "x")
	if code := dispatch([]string{"report", "--lang", "en", "--out", out2, dir, "--formats", "html"}, &out, &errb); code != exitOK {
		t.Fatalf("--out: exit %d %s", code, errb.String())
	}
	h, _ := os.ReadFile(filepath.Join(out2, "relatorio.html"))
	if !strings.Contains(string(h), "EMBEDDED SERVICE") {
		t.Error("--lang en not applied")
	}
}

func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"report", dir}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "results.json") {
		t.Errorf("missing results.json: exit %d, %q", code, errb.String())
	}
	writeResults(t, dir, sampleResults())
	errb.Reset()
	if code := dispatch([]string{"report", dir, "--formats", "pdf"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "pdf") {
		t.Errorf("bad format: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"report", dir, "--lang", "fr"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "fr") {
		t.Errorf("bad lang: exit %d, %q", code, errb.String())
	}
	if code := dispatch([]string{"report"}, &out, &errb); code != exitUsage {
		t.Errorf("no RUNDIR: exit %d", code)
	}
	r := sampleResults()
	r.Totals.In.AmountCents++
	writeResults(t, dir, r)
	errb.Reset()
	if code := dispatch([]string{"report", dir, "--formats", "json"}, &out, &errb); code != exitProblems || !strings.Contains(errb.String(), "não conferem") {
		t.Errorf("unreconciled totals: exit %d, %q", code, errb.String())
	}
	// totals that close among themselves but are not the sums of the rows
	r = sampleResults()
	r.Totals.In.AmountCents += 7
	r.Totals.Issued.AmountCents += 7
	writeResults(t, dir, r)
	errb.Reset()
	if code := dispatch([]string{"report", dir, "--formats", "html", "--no-rejected"}, &out, &errb); code != exitProblems || !strings.Contains(errb.String(), "não são a soma das suas linhas") {
		t.Errorf("totals not the rows' sums: exit %d, %q", code, errb.String())
	}
	// a results.json cut short
	os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"version":1,"run":{"id":"r1"}`), 0o644)
	errb.Reset()
	if code := dispatch([]string{"report", dir, "--formats", "json"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "incompleto") {
		t.Errorf("truncated results.json: exit %d, %q", code, errb.String())
	}
}

func TestReportCommandRejectedRows(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pagadores.csv")
	content := "nome;cpf;valor\nAna;01234567890;10,00\nBia;52998224725;5,00\n"
	if err := os.WriteFile(in, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	r := sampleResults()
	r.Run.InputFile = in
	r.Run.InputSHA256 = hex.EncodeToString(sum[:])
	writeResults(t, dir, r)
	var out, errb bytes.Buffer
	if code := dispatch([]string{"report", dir, "--formats", "json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "reports", "rejeitadas.csv"))
	if err != nil {
		t.Fatalf("no rejected rows: %v (stdout %s)", err, out.String())
	}
	if got, want := string(b), "nome;cpf;valor;Problema\r\nBia;52998224725;5,00;CPF inválido [cpf_invalido]\r\n"; got != want {
		t.Errorf("rejeitadas.csv = %q, want %q", got, want)
	}
	// --no-rejected skips them
	os.Remove(filepath.Join(dir, "reports", "rejeitadas.csv"))
	if code := dispatch([]string{"report", dir, "--formats", "json", "--no-rejected"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "reports", "rejeitadas.csv")); err == nil {
		t.Error("--no-rejected still wrote the rejected rows")
	}
}
