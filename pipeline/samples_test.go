package pipeline

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/encoding/charmap"

	"remessa/rules"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const samplesDir = "../samples"

func loadSample(t *testing.T, rel string) (*Job, *Validation) {
	t.Helper()
	j, err := Load(filepath.Join(samplesDir, rel), testOpts(nil))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	v, err := Validate(context.Background(), j)
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if !v.Clean() {
		for _, n := range v.Notes {
			t.Log(n.Localized("pt"))
		}
		t.Fatalf("%s: %d rows refused, want a clean sample", rel, v.Summary.Refused)
	}
	return j, v
}

// centsOf converts "1.234,56" (pt-BR text) or "920.5" (an XLSX raw
// number) to cents independently of the code under test.
func centsOf(t *testing.T, s string) int64 {
	t.Helper()
	var ip, fp string
	if strings.Contains(s, ",") {
		ip, fp, _ = strings.Cut(strings.ReplaceAll(s, ".", ""), ",")
	} else {
		ip, fp, _ = strings.Cut(s, ".")
	}
	n, err := strconv.ParseInt(ip+(fp + "00")[:2], 10, 64)
	if err != nil {
		t.Fatalf("cents of %q: %v", s, err)
	}
	return n
}

func batchBody(t *testing.T, desc string, items []Item) []byte {
	t.Helper()
	body := struct {
		Descricao string         `json:"descricao"`
		Cobsv     []*CobvRequest `json:"cobsv"`
	}{Descricao: desc}
	for i := range items {
		body.Cobsv = append(body.Cobsv, items[i].Cobv)
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSampleEscola(t *testing.T) {
	_, v := loadSample(t, "escola/carnes.yaml")
	if len(v.Items) != 40 {
		t.Fatalf("%d items, want 40", len(v.Items))
	}
	f, err := excelize.OpenFile(filepath.Join(samplesDir, "escola/alunos.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Alunos", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i, it := range v.Items {
		r := rows[i+1] // Matrícula Aluno Turma Responsável CPF E-mail Telefone Logradouro Número Bairro CEP Cidade UF Mensalidade
		c := it.Carnet
		if c == nil {
			t.Fatalf("item %d has no carnet", i)
		}
		wantCPF := fmt.Sprintf("%011s", digits(r[4]))
		value := centsOf(t, r[13])
		if it.Key != r[0] || it.SourceRow != i+2 || c.Customer.CPF != wantCPF || c.Customer.Name != r[3] {
			t.Errorf("row %d: key %q row %d cpf %q name %q; want %q %d %q %q", i+2, it.Key, it.SourceRow, c.Customer.CPF, c.Customer.Name, r[0], i+2, wantCPF, r[3])
		}
		if want := "Mensalidade " + r[2] + " - " + r[1]; len(c.Items) != 1 || c.Items[0].Name != want || c.Items[0].Value != value || c.Items[0].Amount != 1 {
			t.Errorf("row %d: items %+v, want one %q of %d", i+2, c.Items, want, value)
		}
		if c.Repeats != 12 || c.ExpireAt != "2026-12-10" || c.Configurations == nil || c.Configurations.Fine != 200 || c.Configurations.Interest != 33 {
			t.Errorf("row %d: repeats %d expire %s config %+v", i+2, c.Repeats, c.ExpireAt, c.Configurations)
		}
		if cd := c.ConditionalDiscount; cd == nil || cd.Type != "percentage" || cd.Value != 500 || cd.UntilDate != "2026-12-05" {
			t.Errorf("row %d: conditional discount %+v", i+2, cd)
		}
		if c.Metadata == nil || c.Metadata.NotificationURL != "https://escola.example.com/notificacoes" {
			t.Errorf("row %d: metadata %+v", i+2, c.Metadata)
		}
		if a := c.Customer.Address; a == nil || a.State != r[12] || a.City != r[11] || a.Zipcode != fmt.Sprintf("%08s", digits(r[10])) {
			t.Errorf("row %d: address %+v", i+2, a)
		}
		if it.AmountCents != 12*value || len(it.Parcels) != 12 || it.Parcels[11].DueDate != civilDate(2027, 11, 10) {
			t.Errorf("row %d: amount %d parcels %v", i+2, it.AmountCents, it.Parcels)
		}
		total += 12 * value
	}
	p := BuildPlan("carnes.yaml", v.Job, v)
	if p.Issue.Carnets != 40 || p.Issue.Parcels != 480 || p.Totals.AcceptedCents != total || len(p.Totals.ByDueMonth) != 12 {
		t.Errorf("plan: %+v", p.Issue)
	}
	if len(p.Calls) != 1 || p.Calls[0].Route != RouteCarnet || p.Calls[0].Calls != 40 || p.Calls[0].Quota != 15000 || p.Days != 1 {
		t.Errorf("plan calls: %+v days %d", p.Calls, p.Days)
	}
	// CPFs stored as numbers lost their zero: warned, and restored.
	restored := 0
	for _, n := range v.Notes {
		if n.Code == "zeros_restaurados" && n.Header == "CPF" {
			restored++
		}
	}
	if restored != 4 { // rows 5, 15, 25, 35 (every 10th student from the 4th)
		t.Errorf("%d CPF restorations, want 4", restored)
	}
}

func TestSampleMensal(t *testing.T) {
	j, v := loadSample(t, "mensal/cobv.yaml")
	raw, err := os.ReadFile(filepath.Join(samplesDir, "mensal/pagadores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := charmap.Windows1252.NewDecoder().Bytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(bytes.NewReader(dec))
	cr.Comma = ';'
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2501 || len(v.Items) != 2500 {
		t.Fatalf("%d records, %d items; want 2500 payers", len(recs)-1, len(v.Items))
	}
	for i, it := range v.Items {
		r := recs[i+1] // Código Nome CPF E-mail Logradouro Cidade UF CEP Valor Descrição
		c := it.Cobv
		wantCPF := fmt.Sprintf("%011s", digits(r[2]))
		wantValor := rules.FormatPixAmount(centsOf(t, r[8]))
		if c.Devedor.CPF != wantCPF || c.Devedor.Nome != r[1] || c.Valor.Original != wantValor {
			t.Fatalf("row %d: devedor %+v valor %s; want cpf %s nome %q valor %s", i+2, c.Devedor, c.Valor.Original, wantCPF, r[1], wantValor)
		}
		if c.Calendario.DataDeVencimento != "2026-12-10" || c.Calendario.ValidadeAposVencimento != 30 || c.Chave != "financeiro@associacao.example.com" {
			t.Fatalf("row %d: %+v chave %s", i+2, c.Calendario, c.Chave)
		}
		if want := r[9] + " - associado " + r[0]; c.SolicitacaoPagador != want {
			t.Fatalf("row %d: solicitacao %q, want %q", i+2, c.SolicitacaoPagador, want)
		}
		if *c.Valor.Multa != (Modalidade{2, "2.00"}) || *c.Valor.Juros != (Modalidade{3, "1.00"}) || c.Valor.Desconto == nil ||
			len(c.Valor.Desconto.DescontoDataFixa) != 1 || c.Valor.Desconto.DescontoDataFixa[0] != (DataValor{"2026-12-05", "10.00"}) {
			t.Fatalf("row %d: valor %+v", i+2, c.Valor)
		}
	}
	p := BuildPlan("cobv.yaml", j, v)
	if len(p.Issue.Batches) != 3 || p.Issue.Batches[0].Items != 1000 || p.Issue.Batches[1].Items != 1000 || p.Issue.Batches[2].Items != 500 {
		t.Fatalf("batches %+v, want 1000+1000+500", p.Issue.Batches)
	}
	if b := Batches(j, v.Items); len(b) != 3 || b[1] != [2]int{1000, 2000} || b[2] != [2]int{2000, 2500} {
		t.Errorf("Batches = %v", b)
	}
	// Body size: the plan's count must equal the encoded batch body.
	body := batchBody(t, "Mensalidades", v.Items[2000:2500])
	if p.Issue.Batches[2].Bytes != len(body)+500*(len(`,"txid":""`)+35) {
		t.Errorf("batch 3 bytes %d, encoded body %d + derived txids", p.Issue.Batches[2].Bytes, len(body))
	}
}

// addShare adds cents to want[recipient][month].
func addShare(want map[string]map[string]int64, recipient, month string, cents int64) {
	if want[recipient] == nil {
		want[recipient] = map[string]int64{}
	}
	want[recipient][month] += cents
}

func TestSampleSplits(t *testing.T) {
	j, v := loadSample(t, "split/pedidos.yaml")
	wantByRecipient := map[string]map[string]int64{}
	for _, it := range v.Items {
		ci := it.Slip.Items[0]
		m := ci.Marketplace
		if m == nil || len(m.Repasses) != 2 || m.Repasses[1] != (Repasse{PayeeCode: "9f8e7d6c5b4a39281706f5e4d3c2b1a0", Percentage: 1000}) {
			t.Fatalf("row %d: marketplace %+v", it.SourceRow, m)
		}
		p0 := m.Repasses[0].Percentage
		if p0 < 5000 || p0 > 8000 || p0%500 != 0 {
			t.Errorf("row %d: seller percentage %d, want 50%%..80%% in steps of 5", it.SourceRow, p0)
		}
		total := ci.Value
		wantSeller, wantPlatform := total*p0/10000, total*1000/10000
		got := map[string]int64{}
		for _, s := range it.Split {
			if s.Own {
				got["own"] += s.AmountCents
			} else {
				got[s.Recipient] += s.AmountCents
			}
		}
		if got[m.Repasses[0].PayeeCode] != wantSeller || got["9f8e7d6c5b4a39281706f5e4d3c2b1a0"] != wantPlatform || got["own"] != total-wantSeller-wantPlatform {
			t.Errorf("row %d: shares %v of %d, want seller %d platform %d", it.SourceRow, got, total, wantSeller, wantPlatform)
		}
		month := it.DueDate.Format("2006-01")
		addShare(wantByRecipient, m.Repasses[0].PayeeCode, month, wantSeller)
		addShare(wantByRecipient, "9f8e7d6c5b4a39281706f5e4d3c2b1a0", month, wantPlatform)
		addShare(wantByRecipient, OwnRecipient, month, total-wantSeller-wantPlatform)
	}
	// the plan's totals by split recipient and due month (20 Dec 2026)
	if p := BuildPlan("pedidos.yaml", j, v); !reflect.DeepEqual(p.Totals.BySplitRecipient, wantByRecipient) || len(wantByRecipient) != 5 || len(wantByRecipient[OwnRecipient]) != 1 {
		t.Errorf("plan by recipient %v, want %v", p.Totals.BySplitRecipient, wantByRecipient)
	}

	j, v = loadSample(t, "split/associados.yaml")
	p := BuildPlan("associados.yaml", j, v)
	wantByRecipient = map[string]map[string]int64{}
	if p.Issue.SplitConfigs != 1 {
		t.Errorf("%d split configs, want 1", p.Issue.SplitConfigs)
	}
	var sum int64
	for _, it := range v.Items {
		cfg := it.PixSplit
		if cfg == nil || cfg.Split.MinhaParte != (PixSplitPart{Tipo: "porcentagem", Valor: "65.00"}) || len(cfg.Split.Repasses) != 2 ||
			cfg.Split.Repasses[0].Valor != "20.00" || *cfg.Split.Repasses[0].Favorecido != (Favorecido{CPF: "52998224725", Conta: "7654321"}) ||
			*cfg.Split.Repasses[1].Favorecido != (Favorecido{CNPJ: "11222333000181", Conta: "1111111"}) {
			t.Fatalf("row %d: split config %+v", it.SourceRow, cfg)
		}
		v := it.AmountCents
		want := map[string]int64{"own": v - v*2000/10000 - v*1500/10000, "7654321": v * 2000 / 10000, "1111111": v * 1500 / 10000}
		for k, c := range want {
			if k == "own" {
				k = OwnRecipient
			}
			addShare(wantByRecipient, k, "2026-12", c) // due +20d from 22 Nov 2026
		}
		for _, s := range it.Split {
			k := s.Recipient
			if s.Own {
				k = "own"
			}
			if s.AmountCents != want[k] {
				t.Errorf("row %d: %s gets %d, want %d", it.SourceRow, k, s.AmountCents, want[k])
			}
			sum += s.AmountCents
		}
	}
	if sum != p.Totals.AcceptedCents {
		t.Errorf("shares sum to %d, total %d", sum, p.Totals.AcceptedCents)
	}
	if !reflect.DeepEqual(p.Totals.BySplitRecipient, wantByRecipient) || len(wantByRecipient) != 3 {
		t.Errorf("plan by recipient %v, want %v", p.Totals.BySplitRecipient, wantByRecipient)
	}
}

func TestSampleBoletos(t *testing.T) {
	_, v := loadSample(t, "boletos/boletos.yaml")
	if len(v.Items) != 25 {
		t.Fatalf("%d items", len(v.Items))
	}
	for _, it := range v.Items {
		bb := it.Slip.Payment.BankingBillet
		if bb.ExpireAt != "2026-12-07" || bb.Configurations == nil || *bb.Configurations.DaysToWriteOff != 30 || bb.Configurations.Fine != 200 {
			t.Fatalf("row %d: %+v", it.SourceRow, bb)
		}
		if lines := strings.Split(bb.Message, "\n"); len(lines) != 2 || lines[1] != "Dúvidas: (11) 4000-0000" {
			t.Errorf("row %d: message %q", it.SourceRow, bb.Message)
		}
		if it.Slip.Metadata == nil || it.Slip.Metadata.CustomID != "manut-"+it.Key {
			t.Errorf("row %d: metadata %+v", it.SourceRow, it.Slip.Metadata)
		}
	}
}

// TestGolden compares validate --format json and plan --format json of the
// school sample with testdata (run with -update to rewrite them after a
// deliberate change, and review the diff).
func TestGolden(t *testing.T) {
	jobPath := "../samples/escola/carnes.yaml"
	j, v := loadSample(t, "escola/carnes.yaml")
	var vb, pb bytes.Buffer
	if err := NewValidationReport(jobPath, j, v, nil).WriteJSON(&vb); err != nil {
		t.Fatal(err)
	}
	if err := BuildPlan(jobPath, j, v).WriteJSON(&pb); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"escola-validate.json": vb.Bytes(), "escola-plan.json": pb.Bytes()} {
		path := filepath.Join("testdata", name)
		if *update {
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGolden -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden file:\n%s", name, got)
		}
	}
}

// TestSamplesMatchSchema checks every sample job against the JSON Schema's
// structure: types, required keys, enums and no additional properties.
func TestSamplesMatchSchema(t *testing.T) {
	schema := Schema("pt")
	jobs, _ := filepath.Glob(filepath.Join(samplesDir, "*", "*.yaml"))
	if len(jobs) < 4 {
		t.Fatalf("found %d sample jobs", len(jobs))
	}
	for _, p := range jobs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if errs := checkSchema(schema, doc, ""); len(errs) > 0 {
			t.Errorf("%s: %v", p, errs)
		}
	}
	// and the checker does reject what it should
	bad := map[string]any{"version": 1, "input": map[string]any{"file": "x"}, "issue": map[string]any{"carnets": map[string]any{"repeats": 3}, "cobv": map[string]any{}}, "extra": true, "service": "cloud"}
	errs := checkSchema(schema, bad, "")
	want := []string{"/: additional property extra", "/issue: more than 1 properties", "/service: not in enum"}
	for _, w := range want {
		found := false
		for _, e := range errs {
			found = found || strings.HasPrefix(e, w)
		}
		if !found {
			t.Errorf("schema check missed %q; got %v", w, errs)
		}
	}
}

func checkSchema(s map[string]any, v any, ptr string) []string {
	var errs []string
	at := ptr
	if at == "" {
		at = "/"
	}
	if enum, ok := s["enum"]; ok {
		okv := false
		switch e := enum.(type) {
		case []string:
			for _, x := range e {
				okv = okv || fmt.Sprint(v) == x
			}
		case []int:
			for _, x := range e {
				okv = okv || fmt.Sprint(v) == strconv.Itoa(x)
			}
		}
		if !okv {
			errs = append(errs, at+": not in enum")
		}
	}
	typeOK := func(t string) bool {
		switch t {
		case "object":
			_, ok := v.(map[string]any)
			return ok
		case "array":
			_, ok := v.([]any)
			return ok
		case "string":
			_, ok := v.(string)
			return ok
		case "integer":
			_, ok := v.(int)
			return ok
		case "number":
			switch v.(type) {
			case int, float64:
				return true
			}
		case "boolean":
			_, ok := v.(bool)
			return ok
		}
		return false
	}
	switch tt := s["type"].(type) {
	case string:
		if !typeOK(tt) {
			return append(errs, fmt.Sprintf("%s: not %s", at, tt))
		}
	case []string:
		ok := false
		for _, x := range tt {
			ok = ok || typeOK(x)
		}
		if !ok {
			return append(errs, fmt.Sprintf("%s: not one of %v", at, tt))
		}
	}
	if m, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := m[r]; !ok {
				errs = append(errs, fmt.Sprintf("%s: missing %s", at, r))
			}
		}
		if mx, ok := s["maxProperties"].(int); ok && len(m) > mx {
			errs = append(errs, fmt.Sprintf("%s: more than %d properties", at, mx))
		}
		for k, x := range m {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, checkSchema(ps, x, ptr+"/"+k)...)
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, checkSchema(ap, x, ptr+"/"+k)...)
			} else if s["additionalProperties"] == false {
				errs = append(errs, fmt.Sprintf("%s: additional property %s", at, k))
			}
		}
	}
	if a, ok := v.([]any); ok {
		if is, ok := s["items"].(map[string]any); ok {
			for i, x := range a {
				errs = append(errs, checkSchema(is, x, fmt.Sprintf("%s/%d", ptr, i))...)
			}
		}
	}
	return errs
}

func asStrings(v any) []string {
	s, _ := v.([]string)
	return s
}

// TestPublishedSchema keeps docs/job-file.schema.json (for editors) equal
// to what remessa schema --lang en prints; rewrite it with -update.
func TestPublishedSchema(t *testing.T) {
	path := filepath.Join("..", "docs", "job-file.schema.json")
	if *update {
		if err := os.WriteFile(path, SchemaJSON("en"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, SchemaJSON("en")) {
		t.Errorf("%s is out of date: go test ./pipeline -run TestPublishedSchema -update", path)
	}
}
