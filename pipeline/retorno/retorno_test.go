package retorno_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/cnabtest"
	"remessa/pipeline/results"
	"remessa/pipeline/retorno"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/sandbox"
	"remessa/sandbox/control"
)

// occ is one occurrence of a CNAB 240 retorno as the test reads it, by
// FEBRABAN's positions (segment T 16–17, 38–57, 59–73, 74–81, 82–96,
// 214–223; segment U 18–32, 78–92, 123–137).
type occ struct {
	code, seu, due, motivos, nosso  string
	value, paid, fineInterest, over string
}

func read240(t *testing.T, b []byte) []occ {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(b), "\r\n"), "\r\n")
	var out []occ
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if len(l) != 240 {
			t.Fatalf("line %d: %d positions", i+1, len(l))
		}
		if l[7] != '3' || l[13] != 'T' {
			continue
		}
		u := lines[i+1]
		if u[13] != 'U' {
			t.Fatalf("line %d: T without its U", i+1)
		}
		out = append(out, occ{code: l[15:17], nosso: strings.TrimSpace(l[37:57]), seu: strings.TrimSpace(l[58:73]), due: l[73:81],
			value: l[81:96], motivos: strings.TrimSpace(l[213:223]), fineInterest: u[17:32], paid: u[77:92], over: u[122:137]})
	}
	return out
}

type world struct {
	dir string
	rn  *sandbox.Running
	cl  *api.Client
	ctl *control.Client
	ids map[string]int64 // key → charge id
	res *results.Results
}

// issue runs a CNAB 240 remessa of the titles on an embedded sandbox.
func issue(t *testing.T, work string, titles []cnabtest.Title240, nsa int, rn *sandbox.Running) *world {
	t.Helper()
	if err := os.WriteFile(filepath.Join(work, "COB.REM"), []byte(cnabtest.File240(nsa, titles, "\r\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(work, "job.yaml")
	os.WriteFile(job, []byte("version: 1\ninput:\n  file: COB.REM\n  bank: \"341\"\non_invalid: skip\n"), 0o644)
	out, err := run.Run(context.Background(), job, run.Options{Embedded: rn, RunsDir: filepath.Join(filepath.Dir(work), "out"), Getenv: runtest.NoEnv})
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.Load(filepath.Join(out.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{dir: out.Dir, rn: rn, cl: runtest.Client(t, rn), ctl: &control.Client{BaseURL: rn.URL}, ids: map[string]int64{}, res: res}
	for _, r := range res.Rows {
		if len(r.ChargeIDs) > 0 {
			w.ids[r.Key] = r.ChargeIDs[0]
		}
	}
	return w
}

func (w *world) pay(t *testing.T, key string, cents int64) {
	t.Helper()
	if _, err := w.ctl.PayCharge(context.Background(), w.ids[key], control.PayRequest{Value: &cents}, w.rn.PayeeCode); err != nil {
		t.Fatalf("pay %s: %v", key, err)
	}
}

func (w *world) opts() retorno.Options {
	return retorno.Options{Sync: true, Status: status.Options{Run: run.Options{Embedded: w.rn}}}
}

// TestRetornoExactlyOnce issues a CNAB 240 remessa of seven titles (one
// refused), pays, settles, cancels and moves some, and checks the
// retorno's occurrences against the test's own list; a second retorno
// after one more payment holds only that payment (NSA 2), a third has
// nothing (no file, no NSA), retorno 1 written again is byte for byte the
// first, and a second run of the same account goes on at NSA 3.
func TestRetornoExactlyOnce(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	rn, err := run.StartEmbedded(filepath.Join(base, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	work := filepath.Join(base, "w1")
	os.MkdirAll(work, 0o755)
	bad := cnabtest.OkTitle("C3", 5000)
	bad.Doc = "52998224724" // wrong check digit
	w := issue(t, work, []cnabtest.Title240{cnabtest.OkTitle("A1", 15000), cnabtest.OkTitle("B2", 9990), bad,
		cnabtest.OkTitle("D4", 7000), cnabtest.OkTitle("E5", 8000), cnabtest.OkTitle("F6", 6000), cnabtest.OkTitle("G7", 4000)}, 3, rn)
	if len(w.ids) != 6 {
		t.Fatalf("issued %v", w.ids)
	}
	w.pay(t, "A1", 15000)
	w.pay(t, "B2", 10000) // 0,10 over
	if err := w.cl.SettleCharge(ctx, w.ids["E5"]); err != nil {
		t.Fatal(err)
	}
	if err := w.cl.CancelCharge(ctx, w.ids["F6"]); err != nil {
		t.Fatal(err)
	}
	if err := w.cl.UpdateBillet(ctx, w.ids["D4"], "2027-03-10"); err != nil {
		t.Fatal(err)
	}
	// a due date change reaches the ledger as the action job records it
	if _, err := status.Sync(ctx, w.dir, w.opts().Status); err != nil {
		t.Fatal(err)
	}
	l, err := status.OpenLedger(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Apply(ctx, []status.Observation{{Key: status.KeyOfCharge(w.ids["D4"]), Due: "2027-03-10"}}, time.Now(), "acao"); err != nil {
		t.Fatal(err)
	}
	l.Close()

	r1, err := retorno.Write(ctx, w.dir, w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if r1.Empty || r1.NSA != 1 || r1.Layout != retorno.Layout240 || !r1.Check.OK {
		t.Fatalf("first retorno: %+v", r1)
	}
	b1, err := os.ReadFile(r1.Path)
	if err != nil {
		t.Fatal(err)
	}
	id := func(k string) string { return strconv.FormatInt(w.ids[k], 10) }
	z := "000000000000000"
	want := []occ{
		{code: "02", seu: "A1", nosso: id("A1"), due: "10022027", value: "000000000015000", paid: z, fineInterest: z, over: z},
		{code: "06", seu: "A1", nosso: id("A1"), due: "10022027", value: "000000000015000", paid: "000000000015000", fineInterest: z, over: z},
		{code: "02", seu: "B2", nosso: id("B2"), due: "10022027", value: "000000000009990", paid: z, fineInterest: z, over: z},
		{code: "06", seu: "B2", nosso: id("B2"), due: "10022027", value: "000000000009990", paid: "000000000010000", fineInterest: z, over: "000000000000010"},
		{code: "03", seu: "C3", nosso: "000C3", due: "10022027", value: "000000000005000", motivos: "46", paid: z, fineInterest: z, over: z},
		{code: "02", seu: "D4", nosso: id("D4"), due: "10022027", value: "000000000007000", paid: z, fineInterest: z, over: z},
		{code: "14", seu: "D4", nosso: id("D4"), due: "10032027", value: "000000000007000", paid: z, fineInterest: z, over: z},
		{code: "02", seu: "E5", nosso: id("E5"), due: "10022027", value: "000000000008000", paid: z, fineInterest: z, over: z},
		{code: "09", seu: "E5", nosso: id("E5"), due: "10022027", value: "000000000008000", motivos: "11", paid: "000000000008000", fineInterest: z, over: z},
		{code: "02", seu: "F6", nosso: id("F6"), due: "10022027", value: "000000000006000", paid: z, fineInterest: z, over: z},
		{code: "09", seu: "F6", nosso: id("F6"), due: "10022027", value: "000000000006000", motivos: "11", paid: z, fineInterest: z, over: z},
		{code: "02", seu: "G7", nosso: id("G7"), due: "10022027", value: "000000000004000", paid: z, fineInterest: z, over: z},
	}
	got := read240(t, b1)
	if len(got) != len(want) {
		t.Fatalf("%d occurrences, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("occurrence %d: %+v\n want %+v", i+1, got[i], want[i])
		}
	}
	// the header names the remessa's company and the retorno's NSA
	if h := string(b1[:240]); h[18:32] != "12345678000195" || h[157:163] != "000001" || h[142] != '2' {
		t.Errorf("header %q", h)
	}
	if len(r1.Rejections) != 1 || !strings.Contains(r1.Rejections[0].Text, "52998224724") {
		t.Errorf("rejections %+v", r1.Rejections)
	}

	w.pay(t, "G7", 4000)
	r2, err := retorno.Write(ctx, w.dir, w.opts())
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(r2.Path)
	got2 := read240(t, b2)
	if r2.NSA != 2 || len(got2) != 1 || got2[0] != (occ{code: "06", seu: "G7", nosso: id("G7"), due: "10022027", value: "000000000004000", paid: "000000000004000", fineInterest: z, over: z}) {
		t.Fatalf("second retorno NSA %d: %+v", r2.NSA, got2)
	}
	r3, err := retorno.Write(ctx, w.dir, w.opts())
	if err != nil || !r3.Empty {
		t.Fatalf("third retorno: %+v %v", r3, err)
	}
	again := filepath.Join(base, "again.RET")
	if _, err := retorno.Rewrite(ctx, w.dir, 1, again); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again); !bytes.Equal(b, b1) {
		t.Errorf("retorno 1 written again differs:\n%s\n%s", b, b1)
	}
	if _, err := retorno.Rewrite(ctx, w.dir, 1, again); err == nil {
		t.Error("Rewrite over an existing file")
	}
	fs, err := retorno.List(ctx, w.dir)
	if err != nil || len(fs) != 2 || fs[0].NSA != 1 || fs[1].NSA != 2 {
		t.Fatalf("list %+v %v", fs, err)
	}

	// a second run of the same account: its first retorno is the account's NSA 3
	work2 := filepath.Join(base, "w2")
	os.MkdirAll(work2, 0o755)
	w2 := issue(t, work2, []cnabtest.Title240{cnabtest.OkTitle("H8", 3000)}, 4, rn)
	r4, err := retorno.Write(ctx, w2.dir, w2.opts())
	if err != nil || r4.NSA != 3 {
		t.Fatalf("second run's retorno: %+v %v", r4, err)
	}
}

// TestRetornoLayoutErrors: a run from a sheet must name the layout, an
// unknown layout is refused naming the good ones, and an existing output
// file is never overwritten.
func TestRetornoLayoutErrors(t *testing.T) {
	is := runtest.Sample(t, "../../samples/boletos", "boletos.yaml", "clientes.csv")
	_, err := retorno.Write(context.Background(), is.Dir, retorno.Options{})
	if err == nil || !strings.Contains(err.Error(), "--layout cnab240, cnab400-237 ou cnab400-341") {
		t.Fatalf("a run from a sheet without --layout: %v", err)
	}
	_, err = retorno.Write(context.Background(), is.Dir, retorno.Options{Layout: "cnab999"})
	if err == nil || !strings.Contains(err.Error(), `"cnab999"`) {
		t.Fatalf("an unknown layout: %v", err)
	}
	out := filepath.Join(t.TempDir(), "R.RET")
	os.WriteFile(out, []byte("x"), 0o644)
	_, err = retorno.Write(context.Background(), is.Dir, retorno.Options{Layout: retorno.Layout240, Output: out})
	if err == nil || !strings.Contains(err.Error(), "já existe") {
		t.Fatalf("over an existing file: %v", err)
	}
	r, err := retorno.Write(context.Background(), is.Dir, retorno.Options{Layout: retorno.Layout400Itau, Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	if err != nil || r.Empty || !r.Check.OK || r.ByEvent[retorno.EventEntrada].Count != len(is.Results.Rows) {
		t.Fatalf("a sheet's run in Itaú's layout: %+v %v", r, err)
	}
}
