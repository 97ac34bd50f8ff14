package pipeline

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/formats"
	"remessa/pipeline/results"
)

// fixedNow is the clock of every test: 22 Nov 2026, 12:00 UTC (09:00 in
// São Paulo), so "today" is 2026-11-22.
var fixedNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func testOpts(env map[string]string) LoadOptions {
	return LoadOptions{Now: func() time.Time { return fixedNow }, Getenv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
}

// runCase writes the job and its files into a temp dir, loads and
// validates, and returns the report.
func runCase(t *testing.T, job string, files map[string][]byte, env map[string]string) *ValidationReport {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jp := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(jp, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := Load(jp, testOpts(env))
	var v *Validation
	if err == nil {
		v, err = Validate(context.Background(), j)
	}
	return NewValidationReport("job.yaml", j, v, err)
}

// found lists what a report says is wrong, in a compact comparable form:
// "code@row:column" for row errors, "code@Lline:column" for job problems,
// "code@file" for an unusable input.
func found(r *ValidationReport) []string {
	var out []string
	for _, p := range r.JobProblems {
		out = append(out, fmt.Sprintf("%s@L%d:%d", p.Code, p.Line, p.Column))
	}
	if p := r.FileProblem; p != nil {
		out = append(out, p.Code+"@file")
	}
	for _, n := range r.Notes {
		if n.Severity == SevError {
			out = append(out, fmt.Sprintf("%s@%d:%s", n.Code, n.Row, n.Column))
		}
	}
	sort.Strings(out)
	return out
}

// messages is every message of a report in Portuguese, one a line.
func messages(r *ValidationReport) string {
	var msgs []string
	for _, p := range r.JobProblems {
		msgs = append(msgs, p.Localized("pt"))
	}
	if r.FileProblem != nil {
		msgs = append(msgs, r.FileProblem.Message)
	}
	for _, n := range r.Notes {
		msgs = append(msgs, n.Localized("pt"))
	}
	return strings.Join(msgs, "\n")
}

func warnings(r *ValidationReport) []string {
	var out []string
	for _, n := range r.Notes {
		if n.Severity == SevWarning {
			out = append(out, fmt.Sprintf("%s@%d:%s", n.Code, n.Row, n.Column))
		}
	}
	sort.Strings(out)
	return out
}

// The base input: columns A..M, two valid rows (2 and 3), due in December.
const baseHeader = "Código;Nome;CPF;E-mail;Telefone;Logradouro;Número;Bairro;CEP;Cidade;UF;Valor;Vencimento"

var baseRows = []string{
	"A1;Maria da Conceição;529.982.247-25;maria@example.com;(11) 98765-4321;Rua das Flores;10;Centro;01310-100;São Paulo;SP;150,00;10/12/2026",
	"A2;João Araújo;111.444.777-35;joao@example.com;(21) 3333-4444;Avenida Brasil;2000;Centro;20040-002;Rio de Janeiro;RJ;200,00;10/12/2026",
}

// csvWith returns the base CSV with row 2 (or 3) changed: set maps a
// column letter to a new value.
func csvWith(changes map[int]map[string]string, extra ...string) []byte {
	lines := []string{baseHeader}
	for i, r := range baseRows {
		cells := strings.Split(r, ";")
		for col, v := range changes[i+2] {
			cells[col[0]-'A'] = v
		}
		lines = append(lines, strings.Join(cells, ";"))
	}
	lines = append(lines, extra...)
	return []byte(strings.Join(lines, "\n") + "\n")
}

const carnetJob = `version: 1
input: {file: in.csv}
issue:
  carnets:
    repeats: 3
`

func xlsxBytes(t *testing.T, sheet string, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	f.SetSheetName("Sheet1", sheet)
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(sheet, cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// xlsxPatched is xlsxBytes (sheet "Dados") with old replaced by new in
// the shared strings, to write what excelize will not (Excel's "_x001B_"
// escape of a control character).
func xlsxPatched(t *testing.T, rows [][]any, old, new string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(xlsxBytes(t, "Dados", rows)), int64(len(xlsxBytes(t, "Dados", rows))))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == "xl/sharedStrings.xml" {
			if !bytes.Contains(b, []byte(old)) {
				t.Fatalf("%q not in the shared strings", old)
			}
			b = bytes.ReplaceAll(b, []byte(old), []byte(new))
		}
		w, _ := zw.Create(f.Name)
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestCorpus(t *testing.T) {
	long := strings.Repeat("á", 256)
	cobvJob := func(extra string) string {
		return "version: 1\ninput: {file: in.csv}\nissue:\n  cobv:\n    chave: financeiro@example.com\n" + extra
	}
	splitJob := func(repasses string, mode string) string {
		return "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n    items:\n      - name: Produto\n        value: R$ 100,00\n        marketplace:\n" + mode + "          repasses:\n" + repasses
	}
	const payeeA = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	const payeeB = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	pixRepasses := func(n int, conta func(i int) string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "        - {tipo: porcentagem, valor: 1%%, cpf: 529.982.247-25, conta: \"%s\"}\n", conta(i))
		}
		return b.String()
	}
	pixJob := func(minha string, repasses string) string {
		return "version: 1\nendpoint: {conta: \"1234567\"}\ninput: {file: in.csv}\nissue:\n  cobv:\n    chave: financeiro@example.com\n    split:\n      minha_parte: {tipo: porcentagem, valor: " + minha + "}\n      repasses:\n" + repasses
	}
	header2 := []string{"Código", "Nome", "CPF", "Valor", "Vencimento"}
	xrow := []any{"X1", "Ana Lúcia", "529.982.247-25", 150.5, "10/12/2026"}

	cases := []struct {
		name  string
		job   string
		files map[string][]byte
		env   map[string]string
		want  []string
		exit  int
		msg   string // when set, a message (Portuguese) must contain it
	}{
		// Row problems (exit 1).
		{name: "cpf check digits", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"C": "529.982.247-26"}})},
			want: []string{"cpf_invalido@2:C"}, exit: 1},
		{name: "cnpj check digits", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"C": "11.222.333/0001-82"}})},
			want: []string{"cnpj_invalido@3:C"}, exit: 1},
		{name: "alphanumeric cnpj wrong dv", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"C": "12.ABC.345/01DE-36"}})},
			want: []string{"cnpj_invalido@2:C"}, exit: 1},
		{name: "document wrong length", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"C": "123456789012345"}})},
			want: []string{"documento_invalido@2:C"}, exit: 1},
		{name: "CNPJ in scientific notation", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"C": "1,12223E+13"}})},
			want: []string{"documento_invalido@3:C"}, exit: 1, msg: "notação científica"},
		{name: "empty document", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"C": ""}})},
			want: []string{"documento_ausente@3:C"}, exit: 1},
		{name: "bad email", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"D": "maria@"}})},
			want: []string{"email_invalido@2:D"}, exit: 1},
		{name: "bad phone", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"E": "123"}})},
			want: []string{"telefone_invalido@2:E"}, exit: 1},
		{name: "bad cep", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"I": "2004-00"}})},
			want: []string{"cep_invalido@3:I"}, exit: 1},
		{name: "bad uf", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"K": "XX"}})},
			want: []string{"uf_invalida@2:K"}, exit: 1},
		{name: "zero amount", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"L": "0,00"}})},
			want: []string{"valor_zero@2:L"}, exit: 1},
		{name: "negative amount", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"L": "-5,00"}})},
			want: []string{"valor_negativo@3:L"}, exit: 1},
		{name: "amount above the limit", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"L": "30.000.000,00"}})},
			want: []string{"valor_acima_limite@3:L"}, exit: 1},
		{name: "birth date in the future", job: carnetJob,
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Nascimento\n" + baseRows[0] + ";15/03/1985\n" + baseRows[1] + ";01/01/2030\n")},
			want:  []string{"nascimento_invalido@3:N"}, exit: 1},
		{name: "junk amount", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"L": "cento e dez"}})},
			want: []string{"valor_invalido@2:L"}, exit: 1},
		{name: "below minimum charge", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"L": "4,99"}})},
			want: []string{"valor_minimo@2:"}, exit: 1},
		{name: "past due date", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"M": "01/11/2026"}})},
			want: []string{"vencimento_passado@2:M"}, exit: 1},
		{name: "carnet due today", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"M": "22/11/2026"}})},
			want: []string{"vencimento_passado@3:M"}, exit: 1},
		{name: "date that does not exist", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"M": "31/02/2027"}})},
			want: []string{"data_invalida@2:M"}, exit: 1},
		{name: "oversize name", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"B": long}})},
			want: []string{"texto_longo@2:B"}, exit: 1},
		{name: "empty name", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"B": ""}})},
			want: []string{"nome_ausente@3:B"}, exit: 1},
		{name: "empty key", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"A": ""}})},
			want: []string{"chave_ausente@2:A"}, exit: 1},
		{name: "duplicate key", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"A": "A1"}})},
			want: []string{"chave_duplicada@3:A"}, exit: 1},
		{name: "incomplete address", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"H": ""}})},
			want: []string{"endereco_incompleto@2:H"}, exit: 1},
		{name: "address without a neighbourhood column", job: carnetJob,
			files: map[string][]byte{"in.csv": []byte(strings.Replace(strings.Replace(string(csvWith(nil)), ";Bairro", "", 1), ";Centro", "", 2))},
			want:  []string{"endereco_incompleto@2:", "endereco_incompleto@3:"}, exit: 1},
		{name: "ragged csv row", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(nil, "A3;Só três;campos")},
			want: []string{"linha_irregular@4:"}, exit: 1},
		{name: "oversize per-row message", job: carnetJob,
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Mensagem\n" + baseRows[0] + ";" + strings.Repeat("x", 81) + "\n" + baseRows[1] + ";ok\n")},
			want:  []string{"texto_longo@2:N"}, exit: 1},
		{name: "bad txid", job: cobvJob(""),
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";txid\n" + baseRows[0] + ";abc-123\n" + baseRows[1] + ";\n")},
			want:  []string{"txid_invalido@2:N"}, exit: 1},
		{name: "duplicate txid", job: cobvJob(""),
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";txid\n" + baseRows[0] + ";ABCDEFGHIJKLMNOPQRSTUVWXYZ0123\n" + baseRows[1] + ";ABCDEFGHIJKLMNOPQRSTUVWXYZ0123\n")},
			want:  []string{"txid_duplicado@3:N"}, exit: 1},
		{name: "per-row split over 100%", job: "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n    items:\n      - name: Produto\n        marketplace:\n          repasses:\n            - {payee_code: " + payeeA + ", percentage: \"{{ .Comissao }}\"}\n            - {payee_code: " + payeeB + ", percentage: 50%}\n",
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Comissao\n" + baseRows[0] + ";60%\n" + baseRows[1] + ";40%\n")},
			want:  []string{"marketplace_4@2:"}, exit: 1},
		{name: "per-row percentage not a number", job: "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n    items:\n      - name: Produto\n        marketplace:\n          repasses:\n            - {payee_code: " + payeeA + ", percentage: \"{{ .Comissao }}\"}\n",
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Comissao\n" + baseRows[0] + ";dez\n" + baseRows[1] + ";10%\n")},
			want:  []string{"percentual_invalido@2:N"}, exit: 1},

		// Control characters, at their cell, whatever the format.
		{name: "NUL in a name (csv)", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"B": "Ana\x00 Silva"}})},
			want: []string{"caractere_controle@2:B"}, exit: 1, msg: "caractere de controle U+0000 (NUL) na posição 4"},
		{name: "DEL and C1 in a street (csv)", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{2: {"F": "Rua\u0085 das Flores"}, 3: {"F": "Avenida\x7f"}})},
			want: []string{"caractere_controle@2:F", "caractere_controle@3:F"}, exit: 1, msg: "U+0085 na posição 4"},
		{name: "line break in a quoted name (csv)", job: carnetJob, files: map[string][]byte{"in.csv": csvWith(map[int]map[string]string{3: {"B": "\"João\nAraújo\""}})},
			want: []string{"caractere_controle@3:B"}, exit: 1, msg: "quebra de linha U+000A (LF) na posição 5"},
		{name: "line break in a carnet message (csv)", job: carnetJob,
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Mensagem\n" + baseRows[0] + ";\"Linha 1\r\nLinha 2\"\n" + baseRows[1] + ";ok\n")},
			want:  []string{"caractere_controle@2:N"}, exit: 1},
		{name: "multi-line slip message is allowed (csv)", job: "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n",
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Mensagem\n" + baseRows[0] + ";\"Linha 1\r\nLinha 2\"\n" + baseRows[1] + ";\"a\nb\"\n")},
			want:  nil, exit: 0},
		{name: "tab in a slip message but a BEL in the next (csv)", job: "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n",
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Mensagem\n" + baseRows[0] + ";\"a\tb\"\n" + baseRows[1] + ";\"a\nb\a\"\n")},
			want:  []string{"caractere_controle@3:N"}, exit: 1, msg: "U+0007 (BEL) na posição 4"},
		{name: "control character through a template", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    items:\n      - {name: \"Mensalidade {{ .Turma }} {{ .Código }}\", value: 10}\n",
			files: map[string][]byte{"in.csv": []byte(baseHeader + ";Turma\n" + baseRows[0] + ";5\x02A\n" + baseRows[1] + ";5B\n")},
			want:  []string{"caractere_controle@2:"}, exit: 1, msg: "U+0002 (STX) na posição 14"},
		{name: "ESC in a name (xlsx, as Excel writes it: _x001B_)", job: "version: 1\ninput: {file: in.xlsx}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.xlsx": xlsxPatched(t, [][]any{{"Código", "Nome", "CPF", "Valor", "Vencimento"}, {"X1", "Ana ESC Lúcia", "529.982.247-25", 150.5, "10/12/2026"}}, "Ana ESC Lúcia", "Ana_x001B_ Lúcia")},
			want:  []string{"caractere_controle@2:B"}, exit: 1, msg: "caractere de controle U+001B (ESC) na posição 4"},
		{name: "NUL in a name (yaml)", job: "version: 1\ninput: {file: in.yaml}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.yaml": []byte("- {Código: A1, Nome: \"Ana\\0 Silva\", CPF: \"529.982.247-25\", Valor: \"150,00\", Vencimento: \"10/12/2026\"}\n")},
			want:  []string{"caractere_controle@1:Nome"}, exit: 1, msg: "U+0000 (NUL) na posição 4"},
		{name: "literal _x0041_ escape in xlsx is text", job: "version: 1\ninput: {file: in.xlsx}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.xlsx": xlsxBytes(t, "Dados", [][]any{{"Código", "Nome", "CPF", "Valor", "Vencimento"}, {"X1", "Ana_x0041_ Lúcia", "529.982.247-25", 150.5, "10/12/2026"}})},
			want:  nil, exit: 0},

		// Job problems (exit 2), with line and column.
		{name: "unknown job key", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    parcelas: 3\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"chave_desconhecida@L6:5"}, exit: 2},
		{name: "unknown key and a value out of range, at once", job: "version: 1\nnome: Mensalidades\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 13\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"chave_desconhecida@L2:1", "parcelas_fora_limite@L6:14"}, exit: 2},
		{name: "wrong type", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: [3]\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"tipo_invalido@L5:14"}, exit: 2},
		{name: "wrong type for int", job: "version: 1\nconcurrency: muitas\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"tipo_invalido@L2:14"}, exit: 2},
		// issue may be left out only for a CNAB remessa (slips): a sheet must say
		{name: "missing section", job: "version: 1\ninput: {file: in.csv}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"emissao_ausente@L1:1"}, exit: 2},
		{name: "empty issue", job: "version: 1\ninput: {file: in.csv}\nissue: {}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"emissao_ausente@L3:8"}, exit: 2},
		{name: "two kinds", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets: {repeats: 3}\n  boletos: {}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"emissao_multipla@L4:3"}, exit: 2},
		{name: "undefined variable", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    notification_url: ${WEBHOOK_URL}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"variavel_indefinida@L6:23"}, exit: 2},
		{name: "literal secret", job: "version: 1\nendpoint:\n  client_secret: s3cr3t\ninput: {file: in.csv}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"credencial_literal@L3:18"}, exit: 2},
		{name: "version 2", job: "version: 2\ninput: {file: in.csv}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"valor_nao_permitido@L1:10"}, exit: 2},
		{name: "yaml syntax", job: "version: 1\n\tname: x\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"yaml_invalido@L2:0"}, exit: 2},
		{name: "repeats 13", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 13\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"parcelas_fora_limite@L5:14"}, exit: 2},
		{name: "repeats 1", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 1\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"parcelas_fora_limite@L5:14"}, exit: 2},
		{name: "fine above 10%", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    fine: 12%\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"multa_fora_limite@L6:11"}, exit: 2},
		{name: "interest with too many decimals", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    interest_per_day: 0,0333%\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"percentual_invalido@L6:23"}, exit: 2},
		{name: "oversize carnet message", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    message: " + strings.Repeat("m", 81) + "\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"texto_longo@L6:14"}, exit: 2},
		{name: "slip message five lines", job: "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n    message: \"a\\nb\\nc\\nd\\ne\"\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"mensagem_longa@L5:14"}, exit: 2},
		{name: "constant past first_due", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    first_due: 10/11/2026\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"vencimento_passado@L6:16"}, exit: 2},
		{name: "split over 100%", job: splitJob("            - {payee_code: "+payeeA+", percentage: 60%}\n            - {payee_code: "+payeeB+", percentage: 50%}\n", ""),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_4@L10:13"}, exit: 2},
		{name: "duplicate payee in split", job: splitJob("            - {payee_code: "+payeeA+", percentage: 10%}\n            - {payee_code: "+payeeA+", percentage: 20%}\n", ""),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_10@L11:28"}, exit: 2},
		{name: "zero percent repasse", job: splitJob("            - {payee_code: "+payeeA+", percentage: 0%}\n", ""),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_9@L10:74"}, exit: 2},
		{name: "fixed split with mode 2", job: splitJob("            - {payee_code: "+payeeA+", fixed: \"R$ 10,00\"}\n", "          mode: 2\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_3@L9:17"}, exit: 2},
		{name: "fixed repasses above the item", job: splitJob("            - {payee_code: "+payeeA+", fixed: \"R$ 150,00\"}\n", "          mode: 1\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_5@L11:13"}, exit: 2},
		{name: "split mode 3", job: splitJob("            - {payee_code: "+payeeA+", percentage: 10%}\n", "          mode: 3\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"valor_nao_permitido@L9:17"}, exit: 2},
		{name: "marketplace without repasses", job: strings.Replace(splitJob("", "          mode: 2\n"), "repasses:\n", "repasses: []\n", 1),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_6@L10:21"}, exit: 2},
		{name: "repasses left empty", job: splitJob("", "          mode: 2\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"tipo_invalido@L10:20"}, exit: 2},
		{name: "repasse to the own account", job: strings.Replace(splitJob("            - {payee_code: "+payeeA+", percentage: 10%}\n", ""), "version: 1\n", "version: 1\nendpoint: {payee_code: "+payeeA+"}\n", 1),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"marketplace_8@L11:28"}, exit: 2},
		{name: "bad payee code", job: splitJob("            - {payee_code: xyz, percentage: 10%}\n", ""),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"payee_code_invalido@L10:28"}, exit: 2},
		{name: "more than 20 pix split accounts", job: pixJob("79%", pixRepasses(21, func(i int) string { return fmt.Sprint(100 + i) })),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"pixsplit_contas@L10:9"}, exit: 2},
		{name: "own account in pix split", job: pixJob("99%", pixRepasses(1, func(int) string { return "1234567" })),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"pixsplit_propria_conta@L10:70"}, exit: 2},
		{name: "pix split not 100%", job: pixJob("50%", pixRepasses(1, func(int) string { return "7654321" })),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"pixsplit_soma@L8:7"}, exit: 2},
		{name: "bad pix key", job: "version: 1\ninput: {file: in.csv}\nissue:\n  cobv:\n    chave: não é chave\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"chave_pix_invalida@L5:12"}, exit: 2},
		{name: "abatimento modalidade 3", job: cobvJob("    abatimento: {modalidade: 3, valor: 5%}\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"modalidade_invalida@L6:30"}, exit: 2},
		{name: "percent multa given in reais", job: cobvJob("    multa: {modalidade: 2, valor: \"R$ 2,00\"}\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"tipo_valor@L6:35"}, exit: 2},
		{name: "desconto modalidade 7", job: cobvJob("    desconto: {modalidade: 7, valor: 1%}\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"modalidade_invalida@L6:28"}, exit: 2},
		{name: "batch size 1001", job: cobvJob("    batch: {size: 1001}\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"lote_fora_limite@L6:19"}, exit: 2},
		{name: "constant txid", job: cobvJob("    txid: ABCDEFGHIJKLMNOPQRSTUVWXYZ0123\n"),
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"txid_constante@L6:11"}, exit: 2},
		{name: "template names unknown column", job: "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n    repeats: 3\n    items:\n      - {name: \"Mensalidade {{ .Turma }}\"}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"coluna_inexistente@L7:16"}, exit: 2},
		{name: "unknown field in columns", job: "version: 1\ninput: {file: in.csv, columns: {apelido: Nome}}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"campo_desconhecido@L2:42"}, exit: 2},
		{name: "unknown route in quota", job: "version: 1\nquota: {\"POST /v1/charge\": 100}\ninput: {file: in.csv}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.csv": csvWith(nil)}, want: []string{"rota_desconhecida@L2:28"}, exit: 2},

		// Unusable input files (exit 2).
		{name: "empty file", job: carnetJob, files: map[string][]byte{"in.csv": {}}, want: []string{"arquivo_vazio@file"}, exit: 2},
		{name: "header only", job: carnetJob, files: map[string][]byte{"in.csv": []byte(baseHeader + "\n")}, want: []string{"sem_dados@file"}, exit: 2},
		{name: "missing column", job: carnetJob, files: map[string][]byte{"in.csv": []byte("Código;Nome;Valor;Vencimento\nA1;Maria;150,00;10/12/2026\n")},
			want: []string{"colunas_ausentes@file"}, exit: 2, msg: `Cabeçalhos encontrados: "Código", "Nome", "Valor", "Vencimento"`},
		{name: "missing key column", job: "version: 1\ninput: {file: in.csv, key: Matrícula}\nissue:\n  carnets: {repeats: 3}\n", files: map[string][]byte{"in.csv": csvWith(nil)},
			want: []string{"colunas_ausentes@file"}, exit: 2},
		{name: "input not found", job: "version: 1\ninput: {file: nao-existe.csv}\nissue:\n  carnets: {repeats: 3}\n", want: []string{"erro_leitura@file"}, exit: 2},
		{name: "wrong sheet", job: "version: 1\ninput: {file: in.xlsx, sheet: Alunos}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.xlsx": xlsxBytes(t, "Planilha1", [][]any{{"Código", "Nome", "CPF", "Valor", "Vencimento"}, xrow})},
			want:  []string{"aba_inexistente@file"}, exit: 2, msg: `abas da planilha: "Planilha1"`},
		{name: "binary file named .csv", job: carnetJob, files: map[string][]byte{"in.csv": append([]byte("\x00\x01\x02garbage"), bytes.Repeat([]byte{0xff, 0x00, 0x13, ';'}, 600)...)},
			want: []string{formats.CodeUnknownFormat + "@file"}, exit: 2, msg: "o arquivo não parece uma planilha: é um arquivo binário"},
		{name: "corrupt zip", job: "version: 1\ninput: {file: in.xlsx}\nissue:\n  carnets: {repeats: 3}\n",
			files: map[string][]byte{"in.xlsx": []byte("PK\x03\x04 this is not really a zip file at all")},
			want:  []string{"arquivo_corrompido@file"}, exit: 2},
	}
	_ = header2
	if len(cases) < 30 {
		t.Fatalf("corpus has %d cases, want at least 30", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCase(t, c.job, c.files, c.env)
			got := found(r)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("got %v, want %v\n%s", got, c.want, messages(r))
			}
			if r.ExitCode != c.exit {
				t.Errorf("exit code %d, want %d", r.ExitCode, c.exit)
			}
			if msgs := messages(r); c.msg != "" && !strings.Contains(msgs, c.msg) {
				t.Errorf("no message contains %q:\n%s", c.msg, msgs)
			}
			if w := warnings(r); len(w) != 0 {
				t.Errorf("warnings %v, want none", w)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	// Row 3 repeats row 2's payer, value and due date under another key;
	// row 2's CPF lost its leading zeros (typed as a number).
	rows := csvWith(map[int]map[string]string{
		2: {"C": "191"},                                              // 000.000.001-91
		3: {"C": "000.000.001-91", "L": "150,00", "M": "10/12/2026"}, // same payer, value, due
	})
	r := runCase(t, carnetJob, map[string][]byte{"in.csv": rows}, nil)
	if got := found(r); len(got) != 0 || r.ExitCode != 0 {
		t.Fatalf("errors %v exit %d, want a clean validation", got, r.ExitCode)
	}
	want := []string{"possivel_duplicata@3:", "zeros_restaurados@2:C"}
	if got := warnings(r); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("warnings %v, want %v", got, want)
	}
}

func TestSkipAndStream(t *testing.T) {
	// on_invalid does not change validation; the stream gives every row once.
	rows := csvWith(map[int]map[string]string{2: {"C": "529.982.247-26"}})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.csv"), rows, 0o644)
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(carnetJob+"on_invalid: skip\n"), 0o644)
	j, err := Load(filepath.Join(dir, "job.yaml"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	var items, refused []int
	sum, err := ValidateStream(context.Background(), j, Handler{
		Item:    func(it *Item) error { items = append(items, it.SourceRow); return nil },
		Refused: func(r *results.Row) error { refused = append(refused, r.SourceRow); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(items) != "[3]" || fmt.Sprint(refused) != "[2]" || sum.Rows != 2 || j.OnInvalid != "skip" {
		t.Errorf("items %v refused %v rows %d on_invalid %s", items, refused, sum.Rows, j.OnInvalid)
	}
	if sum.RefusedCents != 45000 || sum.AcceptedCents != 60000 {
		t.Errorf("cents refused %d accepted %d, want 3 × 150,00 and 3 × 200,00", sum.RefusedCents, sum.AcceptedCents)
	}
}

func TestPlanQuotaAndBatches(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	for i := 0; i < 25; i++ {
		cells := strings.Split(baseRows[i%2], ";")
		cells[0] = fmt.Sprintf("K%02d", i)
		cells[11] = fmt.Sprintf("%d,00", 10+i) // distinct values: no duplicate warnings
		rows = append(rows, strings.Join(cells, ";"))
	}
	os.WriteFile(filepath.Join(dir, "in.csv"), []byte(baseHeader+"\n"+strings.Join(rows, "\n")+"\n"), 0o644)
	job := "version: 1\nquota: {\"PUT /v2/lotecobv/:id\": 2, default: 100}\ninput: {file: in.csv}\nissue:\n  cobv:\n    chave: financeiro@example.com\n    batch: {size: 4}\n"
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644)
	j, err := Load(filepath.Join(dir, "job.yaml"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	p, sum, err := StreamPlan(context.Background(), "job.yaml", j)
	if err != nil {
		t.Fatal(err)
	}
	// 25 charges in batches of 4: 7 batches (6 × 4 + 1).
	if sum.Accepted != 25 || len(p.Issue.Batches) != 7 || p.Issue.Batches[6].Items != 1 || p.Issue.Batches[6].FirstRow != 26 {
		t.Fatalf("accepted %d batches %+v", sum.Accepted, p.Issue.Batches)
	}
	calls := map[string]RouteCall{}
	for _, c := range p.Calls {
		calls[c.Route] = c
	}
	// 7 batch PUTs at 2 a day take 4 days; the other routes use the default 100.
	if c := calls[RouteLotePut]; c.Calls != 7 || c.Quota != 2 || c.Days != 4 {
		t.Errorf("lote PUT %+v", c)
	}
	if c := calls[RouteLoteGet]; c.Calls != 7 || c.Quota != 100 || c.Days != 1 || !c.Minimum {
		t.Errorf("lote GET %+v", c)
	}
	if c := calls[RouteCobvList]; c.Calls != 7 {
		t.Errorf("cobv list %+v", c)
	}
	if p.Days != 4 {
		t.Errorf("days %d, want 4", p.Days)
	}
	// 10+11+...+34 reais
	if p.Totals.AcceptedCents != 55000 || p.Totals.ByDueMonth["2026-12"] != 55000 {
		t.Errorf("totals %+v", p.Totals)
	}
}

func TestNullKindMeansDefaults(t *testing.T) {
	r := runCase(t, "version: 1\ninput: {file: in.csv}\nissue:\n  boletos:\n", map[string][]byte{"in.csv": csvWith(nil)}, nil)
	if got := found(r); len(got) != 0 || r.Accepted != 2 {
		t.Errorf("problems %v, accepted %d; want two slips with the defaults", got, r.Accepted)
	}
	// a carnet still needs its repeats
	r = runCase(t, "version: 1\ninput: {file: in.csv}\nissue:\n  carnets:\n", map[string][]byte{"in.csv": csvWith(nil)}, nil)
	if got := found(r); strings.Join(got, " ") != "campo_obrigatorio@L4:3" {
		t.Errorf("problems %v, want repeats required", got)
	}
}

func TestStreamStopsEarly(t *testing.T) {
	dir := t.TempDir()
	var rows []string
	for i := 0; i < 2000; i++ {
		cells := strings.Split(baseRows[i%2], ";")
		cells[0] = fmt.Sprintf("K%04d", i)
		cells[11] = fmt.Sprintf("%d,00", 10+i)
		rows = append(rows, strings.Join(cells, ";"))
	}
	os.WriteFile(filepath.Join(dir, "in.csv"), []byte(baseHeader+"\n"+strings.Join(rows, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(carnetJob), 0o644)
	j, err := Load(filepath.Join(dir, "job.yaml"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	stopErr := errors.New("enough")
	n := 0
	_, err = ValidateStream(context.Background(), j, Handler{Item: func(it *Item) error {
		if n++; n == 300 {
			return stopErr
		}
		return nil
	}})
	if err != stopErr || n != 300 {
		t.Errorf("err %v after %d items, want the handler's error after 300", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ValidateStream(ctx, j, Handler{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
	// every row once, in order
	var got []int
	if _, err := ValidateStream(context.Background(), j, Handler{Item: func(it *Item) error { got = append(got, it.SourceRow); return nil }}); err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r != i+2 {
			t.Fatalf("item %d from row %d, want %d", i, r, i+2)
		}
	}
	if len(got) != 2000 {
		t.Errorf("%d items", len(got))
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before, %d after: the reader goroutine leaked", before, after)
	}
}

// TestTodayInSaoPaulo: at 01:30 UTC on 23 Nov it is still 22 Nov in São
// Paulo, so a due date of 23 Nov is tomorrow (accepted) and 22 Nov is today
// (refused); with the UTC date both would be refused.
func TestTodayInSaoPaulo(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.csv"), csvWith(map[int]map[string]string{2: {"M": "23/11/2026"}, 3: {"M": "22/11/2026"}}), 0o644)
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(carnetJob), 0o644)
	late := time.Date(2026, 11, 23, 1, 30, 0, 0, time.UTC)
	j, err := Load(filepath.Join(dir, "job.yaml"), LoadOptions{Now: func() time.Time { return late }})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	r := NewValidationReport("job.yaml", j, v, nil)
	if got := strings.Join(found(r), " "); got != "vencimento_passado@3:M" || !j.Today.Equal(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("today %s, problems %q; want 2026-11-22 and only row 3 refused", j.Today.Format("2006-01-02"), got)
	}
}

// TestCobvModalidades: multa, juros, abatimento and a per-day desconto of
// a cobv job reach the request in the API's units (valorPerc with two
// decimals: reais or percent by modalidade).
func TestCobvModalidades(t *testing.T) {
	job := "version: 1\ninput: {file: in.csv}\nissue:\n  cobv:\n    chave: financeiro@example.com\n" +
		"    multa: {modalidade: 1, valor: \"R$ 2,50\"}\n    juros: {modalidade: 2, valor: \"0,5%\"}\n" +
		"    abatimento: {modalidade: 1, valor: \"R$ 10,00\"}\n    desconto: {modalidade: 3, valor: \"R$ 0,20\"}\n"
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.csv"), csvWith(nil), 0o644)
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644)
	j, err := Load(filepath.Join(dir, "job.yaml"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(context.Background(), j)
	if err != nil || !v.Clean() || len(v.Items) != 2 {
		t.Fatalf("err %v, notes %+v", err, v.Notes)
	}
	val := v.Items[1].Cobv.Valor
	if val.Original != "200.00" || *val.Multa != (Modalidade{1, "2.50"}) || *val.Juros != (Modalidade{2, "0.50"}) ||
		val.Abatimento == nil || *val.Abatimento != (Modalidade{1, "10.00"}) {
		t.Errorf("valor %+v multa %+v juros %+v abatimento %+v", val, val.Multa, val.Juros, val.Abatimento)
	}
	if d := val.Desconto; d == nil || d.Modalidade != 3 || d.ValorPerc != "0.20" || len(d.DescontoDataFixa) != 0 {
		t.Errorf("desconto %+v", d)
	}
}

// TestCompanyPayer: a CNPJ payer (alphanumeric too) becomes the customer's
// juridical_person, with the "Razão social" column or else the name; a
// CPF payer keeps cpf; birth date and phone reach the customer; a UF in
// lowercase is accepted and sent in uppercase.
func TestCompanyPayer(t *testing.T) {
	in := []byte(baseHeader + ";Razão social;Nascimento\n" +
		strings.Replace(baseRows[0], "529.982.247-25", "11.222.333/0001-81", 1) + ";Flores Comércio Ltda;\n" +
		strings.Replace(strings.Replace(baseRows[1], "111.444.777-35", "12.abc.345/01de-35", 1), ";RJ;", ";rj;", 1) + ";;\n" +
		strings.Replace(strings.Replace(baseRows[0], "A1;", "A3;", 1), "150,00", "170,00", 1) + ";;15/03/1985\n")
	r := runCase(t, carnetJob, map[string][]byte{"in.csv": in}, nil)
	if got := found(r); len(got) != 0 || r.Accepted != 3 {
		t.Fatalf("problems %v accepted %d", got, r.Accepted)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.csv"), in, 0o644)
	os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(carnetJob), 0o644)
	j, err := Load(filepath.Join(dir, "job.yaml"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(context.Background(), j)
	if err != nil || len(v.Items) != 3 {
		t.Fatalf("%v %d items", err, len(v.Items))
	}
	c0, c1, c2 := v.Items[0].Carnet.Customer, v.Items[1].Carnet.Customer, v.Items[2].Carnet.Customer
	if c0.CPF != "" || c0.JuridicalPerson == nil || *c0.JuridicalPerson != (JuridicalPerson{CorporateName: "Flores Comércio Ltda", CNPJ: "11222333000181"}) {
		t.Errorf("row 2 customer %+v %+v", c0, c0.JuridicalPerson)
	}
	if c1.JuridicalPerson == nil || *c1.JuridicalPerson != (JuridicalPerson{CorporateName: "João Araújo", CNPJ: "12ABC34501DE35"}) ||
		c1.Address == nil || c1.Address.State != "RJ" || c1.Address.Zipcode != "20040002" { // UF typed in lowercase
		t.Errorf("row 3 customer %+v %+v", c1, c1.JuridicalPerson)
	}
	if c2.CPF != "52998224725" || c2.JuridicalPerson != nil || c2.Birth != "1985-03-15" || c2.PhoneNumber != "11987654321" {
		t.Errorf("row 4 customer %+v", c2)
	}
}
