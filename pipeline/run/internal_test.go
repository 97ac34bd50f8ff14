package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

func TestRouteOf(t *testing.T) {
	for _, c := range []struct{ method, path, want string }{
		{"POST", "/v1/carnet", "POST /v1/carnet"},
		{"POST", "/v1/charge/one-step", "POST /v1/charge/one-step"},
		{"PUT", "/v2/lotecobv/1234500001", "PUT /v2/lotecobv/:id"},
		{"GET", "/v2/lotecobv/1234500001", "GET /v2/lotecobv/:id"},
		{"GET", "/v2/cobv?loteCobVId=12&inicio=x", "GET /v2/cobv"},
		{"PUT", "/v2/gn/split/config/rmAbc123", "PUT /v2/gn/split/config/:id"},
		{"PUT", "/v2/gn/split/cobv/a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7/vinculo/rm12ab", "PUT /v2/gn/split/cobv/:txid/vinculo/:splitConfigId"},
		{"GET", "/v1/carnet/100002", "GET /v1/carnet/:id"},
	} {
		if got := routeOf(c.method, c.path); got != c.want {
			t.Errorf("routeOf(%s %s) = %q, want %q", c.method, c.path, got, c.want)
		}
	}
}

func TestIDs(t *testing.T) {
	run := "20270110-093000-abcdef"
	if a, b := CustomID(run, "A-001"), CustomID(run, "A-001"); a != b || a != "rm-20270110-093000-abcdef-A-001" {
		t.Errorf("CustomID plain key: %q %q", a, b)
	}
	long := CustomID(run, "Matrícula com espaço e acento")
	if !regexp.MustCompile(`^rm-20270110-093000-abcdef-h[0-9a-f]{20}$`).MatchString(long) {
		t.Errorf("CustomID hashed: %q", long)
	}
	if CustomID(run, "x y") == CustomID(run, "x_y") {
		t.Error("different keys, same custom_id")
	}
	if len(CustomID(run, strings.Repeat("k", 40))) > 255 {
		t.Error("custom_id over the limit")
	}
	seen := map[string]bool{}
	for n := 1; n <= 20; n++ {
		id := BatchID(run, n)
		if !regexp.MustCompile(`^[1-9][0-9]{5,17}$`).MatchString(id) || seen[id] {
			t.Errorf("BatchID %d = %q", n, id)
		}
		seen[id] = true
	}
	if BatchID(run, 1) == BatchID("20270110-093000-abcdee", 1) {
		t.Error("two runs share a batch id")
	}
	if s := SplitConfigID(run, "k"); !regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`).MatchString(s) || s != SplitConfigID(run, "k") {
		t.Errorf("SplitConfigID %q", s)
	}
}

// TestLimiterSlowsOn429 checks the adaptive limiter: unlimited at first,
// three quarters of the observed rate after a 429 (floor 2/s), at most one
// cut per 2 s.
func TestLimiterSlowsOn429(t *testing.T) {
	l := newLimiters(nil)
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		if err := l.Wait(ctx, "POST /v1/carnet"); err != nil {
			t.Fatal(err)
		}
	}
	if l.Limit("POST /v1/carnet") != float64(rate.Inf) {
		t.Fatal("limited before any 429")
	}
	l.Slow("POST /v1/carnet")
	if got := l.Limit("POST /v1/carnet"); got != 30 {
		t.Fatalf("after a 429 at 40 req/s: %v/s, want 30", got)
	}
	l.Slow("POST /v1/carnet") // within 2 s: ignored
	if got := l.Limit("POST /v1/carnet"); got != 30 {
		t.Fatalf("second 429 within 2 s changed the rate to %v", got)
	}
	a := l.get("POST /v1/carnet")
	a.last429 = time.Now().Add(-3 * time.Second)
	l.Slow("POST /v1/carnet")
	if got := l.Limit("POST /v1/carnet"); got != 22.5 {
		t.Fatalf("third 429: %v/s, want 22.5", got)
	}
	// other routes are not affected
	if l.Limit("GET /v1/charges") != float64(rate.Inf) {
		t.Fatal("another route slowed")
	}
	// a configured rate is the ceiling
	l2 := newLimiters(map[string]int{"default": 5})
	if l2.Limit("PUT /v2/lotecobv/:id") != 5 {
		t.Fatalf("configured default rate: %v", l2.Limit("PUT /v2/lotecobv/:id"))
	}
}

func TestNextMidnight(t *testing.T) {
	now := time.Date(2027, 3, 10, 2, 30, 0, 0, time.UTC) // 23:30 on the 9th in São Paulo
	got := nextMidnight(now)
	if want := time.Date(2027, 3, 10, 3, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("nextMidnight = %v, want %v", got.UTC(), want)
	}
}

func TestRunLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockRun(dir); err == nil {
		t.Fatal("a second process could work on the same run")
	}
	unlock()
	u2, err := lockRun(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	u2()
}

// TestLoteBody: the batch body built from the journaled requests is the
// bytes json.Marshal gives for the decoded requests (what the run sent
// before it kept them raw), with and without a description.
func TestLoteBody(t *testing.T) {
	reqs := []rowReq{
		{Cobv: &pipeline.CobvRequest{Txid: "a1", Chave: "k<&>", SolicitacaoPagador: "pagar <até> & \"já\""}},
		{Cobv: &pipeline.CobvRequest{Txid: "b2", Chave: "k"}, SplitKey: "s1"},
	}
	var rows []*jrow
	var items []*pipeline.CobvRequest
	for i, q := range reqs {
		b, _ := json.Marshal(q)
		jr, err := decodeRow(journal.Row{Index: i, State: journal.RowPending, Info: []byte(`{}`), Req: b}, decodeCobv)
		if err != nil {
			t.Fatal(err)
		}
		if jr.req.SplitKey != q.SplitKey {
			t.Fatalf("split key %q, want %q", jr.req.SplitKey, q.SplitKey)
		}
		rows = append(rows, jr)
		items = append(items, q.Cobv)
	}
	for _, desc := range []string{"", "Mensalidades <junho> & \"julho\""} {
		want, _ := json.Marshal(struct {
			Descricao string                  `json:"descricao,omitempty"`
			Cobsv     []*pipeline.CobvRequest `json:"cobsv"`
		}{desc, items})
		if got := loteBody(desc, rows); string(got) != string(want) {
			t.Fatalf("desc %q:\n got %s\nwant %s", desc, got, want)
		}
	}
}

// TestStoredResBarcodes: the journal keeps a result without the barcodes
// its typed lines give, and reading it puts them back; a barcode that is
// not its typed line's is kept as it is.
func TestStoredResBarcodes(t *testing.T) {
	const typed, bar = "36490.00001 00000.000000 00010.002889 8 16600000001685", "36498166000000016850000000000000000001000288"
	res := &results.Row{Index: 3, TypedLine: typed, Barcode: bar, Parcels: []results.Parcel{
		{Number: 1, TypedLine: typed, Barcode: bar},
		{Number: 2, TypedLine: typed, Barcode: "99999999999999999999999999999999999999999999"},
		{Number: 3},
	}}
	b := storedRes(res)
	if strings.Contains(string(b), bar) || !strings.Contains(string(b), "9999999999") {
		t.Fatalf("stored %s", b)
	}
	if res.Barcode != bar || res.Parcels[0].Barcode != bar {
		t.Fatal("storedRes changed the result it was given")
	}
	jr, err := decodeRow(journal.Row{Index: 3, State: journal.RowIssued, Info: []byte(`{}`), Res: b}, decodeResult)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(jr.res)
	want, _ := json.Marshal(res)
	if string(got) != string(want) {
		t.Fatalf("read back\n%s\nwant\n%s", got, want)
	}
}

// TestSeedInputChanged: the seed's pass over the input must give the
// rows of the first pass when there was one; otherwise the seed fails
// with a usage error and leaves the journal without rows.
func TestSeedInputChanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	jobPath := writeSeedJob(t, dir)
	jb, err := pipeline.Load(jobPath, pipeline.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := newRowIDs()
	sum, err := pipeline.ValidateStream(ctx, jb, pipeline.Handler{Item: func(it *pipeline.Item) error { first.add(rowIdentity(it)); return nil }})
	if err != nil || sum.Accepted != 2 {
		t.Fatalf("first pass: %+v %v", sum, err)
	}
	for name, c := range map[string]struct {
		sum pipeline.Summary
		ids *rowIDs
	}{
		"same rows":       {*sum, first},
		"other rows":      {*sum, newRowIDs()},
		"other amounts":   {pipeline.Summary{Rows: 2, Accepted: 2, AcceptedCents: sum.AcceptedCents + 1}, first},
		"one row refused": {pipeline.Summary{Rows: 2, Accepted: 1, Refused: 1, AcceptedCents: sum.AcceptedCents}, first},
	} {
		j, err := journal.Create(filepath.Join(t.TempDir(), journal.FileName))
		if err != nil {
			t.Fatal(err)
		}
		_, err = seed(ctx, j, jb, &Meta{RunID: "20270101-000000-abcdef", Kind: results.Boletos}, seedPass{want: &scan{sum: &c.sum, ids: c.ids}})
		counts, cerr := j.StateCounts(ctx)
		j.Close()
		if cerr != nil {
			t.Fatal(cerr)
		}
		var ue *UsageError
		switch {
		case name == "same rows" && (err != nil || counts[journal.RowPending] != 2):
			t.Fatalf("%s: %v, rows %v", name, err, counts)
		case name != "same rows" && (!errors.As(err, &ue) || !strings.Contains(ue.Msg, "mudou") || len(counts) != 0):
			t.Fatalf("%s: %v, rows %v", name, err, counts)
		}
	}
}

// TestRunInputChangedDuringSeed: with one validation pass (no production
// confirmation), an input that changes while the run is prepared stops
// the run before anything is sent: no run folder, nothing in the index.
func TestRunInputChangedDuringSeed(t *testing.T) {
	dir := t.TempDir()
	jobPath := writeSeedJob(t, dir)
	runs := filepath.Join(dir, "runs")
	seedPassHook = func() {
		if err := os.WriteFile(filepath.Join(dir, "p.csv"), []byte(seedCSV+"C3;Caio;39053344705;30,00\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	defer func() { seedPassHook = nil }()
	_, err := Run(context.Background(), jobPath, Options{RunsDir: runs, RunID: "20270101-000000-abcdef"})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "mudou") {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runs, "20270101-000000-abcdef")); !os.IsNotExist(err) {
		t.Fatalf("the run's folder is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runs, IndexFile)); !os.IsNotExist(err) {
		t.Fatalf("the run is in the index: %v", err)
	}
}

const seedCSV = "Código;Nome;CPF;Valor\nA1;Ana;52998224725;10,00\nB2;Bia;11144477735;20,00\n"

// writeSeedJob writes a two-row slip job and its input into dir.
func writeSeedJob(t *testing.T, dir string) string {
	t.Helper()
	job := `version: 1
name: Semente
input: {file: p.csv, key: Código}
issue:
  boletos:
    due: +15d
    items: [{name: "Serviço", value: "{{ .Valor }}"}]
`
	if err := os.WriteFile(filepath.Join(dir, "p.csv"), []byte(seedCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "job.yaml")
}

// TestMarshalReq: a row's request is journaled as json.Marshal writes it,
// a cobv's written by hand when it and its split key are plain and by
// encoding/json otherwise.
func TestMarshalReq(t *testing.T) {
	cobv := func(nome string) *pipeline.CobvRequest {
		return &pipeline.CobvRequest{Calendario: pipeline.Calendario{DataDeVencimento: "2027-01-15", ValidadeAposVencimento: 30},
			Txid: "abcdefghijklmnopqrstuvwxyz012345678", Devedor: pipeline.Devedor{CPF: "52998224725", Nome: nome},
			Valor: pipeline.CobvValor{Original: "150.00", Multa: &pipeline.Modalidade{Modalidade: 2, ValorPerc: "2.00"}},
			Chave: "financeiro@example.com", SolicitacaoPagador: "Associado K1"}
	}
	for i, r := range []rowReq{
		{Cobv: cobv("João")},
		{Cobv: cobv("João"), SplitKey: "a1b2|80%"},
		{Cobv: cobv("João"), SplitKey: "a<b"},
		{Cobv: cobv("Zé & Filhos")},
		{Cobv: cobv("Ana\u2028"), SplitKey: "k"},
		{Slip: &pipeline.SlipRequest{}},
		{},
	} {
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		if got := marshalReq(&r); string(got) != string(want) {
			t.Errorf("request %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestProductionConfirmedBeforeJournal: production asks for confirmation
// with the plan of a first validation pass, before the run's folder and
// journal exist (no transaction is held open while a person answers); a
// refusal leaves nothing behind.
func TestProductionConfirmedBeforeJournal(t *testing.T) {
	dir := t.TempDir()
	jobPath := writeSeedJob(t, dir)
	runs := filepath.Join(dir, "runs")
	const runID = "20270101-000000-abcdef"
	asked := 0
	_, err := Run(context.Background(), jobPath, Options{RunsDir: runs, RunID: runID, Service: "production",
		Confirm: func(p *pipeline.Plan) bool {
			asked++
			if p.Rows != 2 {
				t.Errorf("plan of %d rows, want 2", p.Rows)
			}
			if _, err := os.Stat(filepath.Join(runs, runID)); !os.IsNotExist(err) {
				t.Errorf("the run's folder exists while confirmation is asked: %v", err)
			}
			return false
		}})
	var ue *UsageError
	if asked != 1 || !errors.As(err, &ue) || !strings.Contains(ue.Msg, "não confirmada") {
		t.Fatalf("asked %d times: %v", asked, err)
	}
	if _, err := os.Stat(filepath.Join(runs, runID)); !os.IsNotExist(err) {
		t.Fatalf("the run's folder is there: %v", err)
	}
}
