package run_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/rules"
	"remessa/sandbox"
	_ "remessa/sandbox/all"
	_ "remessa/sandbox/charges"
	_ "remessa/sandbox/pix"
	"remessa/sandbox/sandboxtest"
)

const (
	testClientID     = "Client_Id_teste"
	testClientSecret = "Client_Secret_teste"
)

// cpf builds a valid CPF from 9 base digits (check digits computed here,
// independently of package rules).
func cpf(base int) string {
	d := fmt.Sprintf("%09d", base%1_000_000_000)
	digits := make([]int, 0, 11)
	for _, c := range d {
		digits = append(digits, int(c-'0'))
	}
	for _, n := range []int{10, 11} {
		sum := 0
		for i := 0; i < n-1; i++ {
			sum += digits[i] * (n - i)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		digits = append(digits, r)
	}
	var sb strings.Builder
	for _, x := range digits {
		sb.WriteByte(byte('0' + x))
	}
	return sb.String()
}

// payer is one input row written by the tests.
type payer struct {
	Key, Name, CPF string
	Cents          int64
	Chave          string
}

func payers(n int, seed int) []payer {
	out := make([]payer, n)
	for i := range out {
		out[i] = payer{Key: fmt.Sprintf("K%04d", i+1), Name: fmt.Sprintf("Pagador Teste %d", i+1),
			CPF: cpf(seed*1000 + 100_000_000 + i*7919), Cents: int64(1000 + 137*i)}
	}
	return out
}

// payersOn is payers(n, seed) whose cobv charges all receive on the Pix key chave.
func payersOn(n, seed int, chave string) []payer {
	ps := payers(n, seed)
	for i := range ps {
		ps[i].Chave = chave
	}
	return ps
}

func reais(c int64) string { return fmt.Sprintf("%d,%02d", c/100, c%100) }

// writeJob writes a CSV of payers and a job file issuing kind for them.
func writeJob(t testing.TB, dir, kind string, ps []payer, extra string) string {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("Código;Nome;CPF;Valor;Email;Telefone;Chave\n")
	for _, p := range ps {
		fmt.Fprintf(&sb, "%s;%s;%s;%s;%s;%s;%s\n", p.Key, p.Name, p.CPF, reais(p.Cents), strings.ToLower(p.Key)+"@example.com", "11987654321", p.Chave)
	}
	if err := os.WriteFile(filepath.Join(dir, "pagadores.csv"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var issue string
	switch kind {
	case "carnets":
		issue = `  carnets:
    repeats: 3
    first_due: +20d
    items: [{name: "Mensalidade {{ .Código }}", value: "{{ .Valor }}"}]
    fine: 2%
    notification_url: https://escola.example.com/notificacoes`
	case "boletos":
		issue = `  boletos:
    due: +15d
    items: [{name: "Serviço {{ .Código }}", value: "{{ .Valor }}"}]`
	case "cobv":
		issue = `  cobv:
    due: +25d
    chave: "{{ .Chave }}"
    solicitacao: "Associado {{ .Código }}"
    batch: {size: 10}`
	}
	job := fmt.Sprintf(`version: 1
name: Teste %s
input:
  file: pagadores.csv
  key: Código
issue:
%s
%s
reports:
  formats: [json]
`, kind, issue, extra)
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// addPixSplit gives the cobv job at path a Pix split: split is the YAML of
// its body (minha_parte, repasses ...), indented under "split:".
func addPixSplit(t testing.TB, path, split string) {
	t.Helper()
	s, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(split), "\n") {
		b.WriteString("\n      " + strings.TrimRight(l, " "))
	}
	body := strings.Replace(s, "    batch: {size: 10}", "    batch: {size: 10}\n    split:"+b.String(), 1)
	if body == s {
		t.Fatal("addPixSplit: the job has no batch line to put the split after")
	}
	writeFileT(t, path, body)
}

// startSandbox runs a sandbox in the test process (the "remote" service).
func startSandbox(t testing.TB, dataDir string, edit func(*sandbox.Config)) *sandbox.Running {
	t.Helper()
	cfg := sandbox.Config{Addr: "127.0.0.1:0", DataDir: dataDir, ClientID: testClientID, ClientSecret: testClientSecret}
	if edit != nil {
		edit(&cfg)
	}
	return sandboxtest.Start(t, cfg)
}

func client(t testing.TB, rn *sandbox.Running, id, secret string) *api.Client {
	t.Helper()
	c, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: id, ClientSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// remoteEnv gives a run the test sandbox's credentials.
func remoteEnv(k string) (string, bool) {
	switch k {
	case "REMESSA_CLIENT_ID":
		return testClientID, true
	case "REMESSA_CLIENT_SECRET":
		return testClientSecret, true
	}
	return os.LookupEnv(k)
}

// listed is one charge as GET /v1/charges lists it.
type listed = runtest.Listed

// listCharges lists every charge of a type created in the last days.
func listCharges(t testing.TB, c *api.Client, chargeType string) []listed {
	return runtest.ListCharges(t, c, chargeType)
}

func today() time.Time { return rules.Today(time.Now()) }

func loadResults(t testing.TB, dir string) *results.Results {
	t.Helper()
	r, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := r.Totals.Reconciles(); !ok {
		t.Fatalf("totals do not reconcile: %s", why)
	}
	return r
}

var _ = run.CustomID

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

func writeFileT(t testing.TB, p, s string) string {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
