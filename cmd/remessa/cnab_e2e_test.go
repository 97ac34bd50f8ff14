package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"remessa/internal/cnabtest"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

// e2eCents is title i's value (i from 1): the test's own arithmetic.
func e2eCents(i int) int64 { return 10_000 + int64(i)*7 }

func e2eKey(i int) string { return fmt.Sprintf("T%03d", i) }

// e2eBad says whether title i is one of the bad ones, and how.
func e2eBad(i int) string {
	switch {
	case i%100 == 0:
		return "data" // 31/02/2027
	case i%50 == 0:
		return "cpf"
	}
	return ""
}

// retornoEvents reads a CNAB 240 retorno by FEBRABAN's positions, written
// here by hand from the manual (segment T: 16–17 movimento, 59–73 seu
// número, 74–81 vencimento, 82–96 valor nominal; segment U: 16–17
// movimento, 78–92 valor pago): one "KEY OCC DUE VALUE PAID" line per
// title, sorted.
func retornoEvents(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur string
	for n, line := range strings.Split(strings.TrimRight(string(b), "\r\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		if len(line) != 240 {
			t.Fatalf("%s line %d: %d characters", path, n+1, len(line))
		}
		if line[7] != '3' {
			continue
		}
		switch line[13] {
		case 'T':
			cur = fmt.Sprintf("%s %s %s %s", strings.TrimSpace(line[58:73]), line[15:17], line[73:81], strings.TrimLeft(line[81:96], "0"))
			if line[15:17] == "03" { // T 214–223: the motivos of a rejection
				cur = fmt.Sprintf("%s %s %s", strings.TrimSpace(line[58:73]), line[15:17], strings.TrimSpace(line[213:223]))
			}
		case 'U':
			if cur == "" || line[15:17] != strings.Fields(cur)[1] {
				t.Fatalf("%s line %d: a U without its T", path, n+1)
			}
			out = append(out, cur+" "+strings.TrimLeft(line[77:92], "0"))
			cur = ""
		}
	}
	sort.Strings(out)
	return out
}

var runDirRe = regexp.MustCompile(`resultados em (\S+)`)

func e2eRun(t *testing.T, want int, args ...string) string {
	t.Helper()
	code, out, errs := runCLI(args...)
	if code != want {
		t.Fatalf("remessa %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	m := runDirRe.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// e2ePay pays titles (full value) in the runs folder's embedded sandbox.
func e2ePay(t *testing.T, runs, dir string, keys map[string]bool) {
	t.Helper()
	rn := sandboxtest.Start(t, sandbox.Config{DataDir: filepath.Join(runs, ".sandbox"), ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	ctl := &control.Client{BaseURL: rn.URL}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Rows {
		if keys[r.Key] && len(r.ChargeIDs) == 1 {
			if _, err := ctl.PayCharge(context.Background(), r.ChargeIDs[0], control.PayRequest{}, rn.PayeeCode); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	rn.Close()
	if n != len(keys) {
		t.Fatalf("paid %d of %d", n, len(keys))
	}
}

// e2eTitles is the first remessa's size: enough for every kind of title
// (bad ones of both kinds, paid, cancelled, moved, paid later, untouched).
const e2eTitles = 200

// TestCNABEndToEnd: an ERP's CNAB 240 remessa of e2eTitles titles, 4 of
// them bad (2 due dates, 2 CPFs), issued on the embedded default; 40 paid
// in the sandbox; a second remessa cancels 18 (02) and moves 18 due dates
// (06); status; the retorno holds every occurrence with the test's own
// values; more payments and a second retorno holds only them.
func TestCNABEndToEnd(t *testing.T) {
	work := t.TempDir()
	runs := filepath.Join(work, "remessa-out")
	var ts []cnabtest.Title240
	for i := 1; i <= e2eTitles; i++ {
		tt := cnabtest.OkTitle(e2eKey(i), e2eCents(i))
		tt.Doc = runtest.CPF(fmt.Sprintf("%09d", 100000000+i*7919))
		switch e2eBad(i) {
		case "data":
			tt.RawDueFix = "31022027"
		case "cpf":
			tt.Doc = "52998224724"
		}
		ts = append(ts, tt)
	}
	write := func(name, body string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("COB1.REM", cnabtest.File240(1, ts, "\r\n"))
	job1 := write("cob1.yaml", "version: 1\nname: Remessa 1\ninput: {file: COB1.REM}\non_invalid: skip\n")
	dir := e2eRun(t, exitProblems, "run", job1, "--quiet")

	paid := map[string]bool{}
	for i := 1; i <= 40; i++ {
		paid[e2eKey(i)] = true
	}
	e2ePay(t, runs, dir, paid)

	// the second remessa: 02 for 41–49 and 51–59 (50 was refused: no
	// charge, refused with the reason), 06 to 15/03/2027 for 61–69 and 71–79
	var mv []cnabtest.Title240
	cancelled, moved := map[string]bool{}, map[string]bool{}
	for i := 41; i <= 79; i++ {
		if i == 60 || i == 70 {
			continue
		}
		tt := cnabtest.OkTitle(e2eKey(i), e2eCents(i))
		tt.Doc = runtest.CPF(fmt.Sprintf("%09d", 100000000+i*7919))
		if i < 60 {
			tt.Mov = 2
			if i != 50 {
				cancelled[e2eKey(i)] = true
			}
		} else {
			tt.Mov, tt.Due = 6, "15032027"
			moved[e2eKey(i)] = true
		}
		mv = append(mv, tt)
	}
	write("COB2.REM", cnabtest.File240(2, mv, "\r\n"))
	job2 := write("cob2.yaml", "version: 1\nname: Remessa 2\ninput: {file: COB2.REM}\non_invalid: skip\n")
	dir2 := e2eRun(t, exitProblems, "run", job2, "--quiet")
	if b, err := os.ReadFile(filepath.Join(dir2, "movimentos.json")); err != nil || !strings.Contains(string(b), `"complete": true`) {
		t.Fatalf("movimentos.json: %v %s", err, b)
	}

	e2eRun(t, exitOK, "status", dir)
	ret1 := filepath.Join(work, "RET1.RET")
	e2eRun(t, exitOK, "retorno", dir, "-o", ret1)
	var want []string
	for i := 1; i <= e2eTitles; i++ {
		k, v := e2eKey(i), fmt.Sprint(e2eCents(i))
		if e2eBad(i) != "" {
			continue // 03 rejeitada: checked below
		}
		want = append(want, fmt.Sprintf("%s 02 10022027 %s ", k, v))
		switch {
		case paid[k]:
			want = append(want, fmt.Sprintf("%s 06 10022027 %s %s", k, v, v))
		case cancelled[k]:
			want = append(want, fmt.Sprintf("%s 09 10022027 %s ", k, v))
		case moved[k]:
			want = append(want, fmt.Sprintf("%s 14 15032027 %s ", k, v))
		}
	}
	got := retornoEvents(t, ret1)
	var rejected []string
	var rest []string
	for _, g := range got {
		if f := strings.Fields(g); f[1] == "03" {
			rejected = append(rejected, f[0]+" "+f[2])
		} else {
			rest = append(rest, g)
		}
	}
	sort.Strings(want)
	if strings.Join(rest, "\n") != strings.Join(want, "\n") {
		t.Errorf("first retorno: %d events, want %d\n%s", len(rest), len(want), diffLines(rest, want))
	}
	var wantRej []string
	for i := 1; i <= e2eTitles; i++ {
		// FEBRABAN's motivos (table C047): 16 due date invalid, 46 CPF/CNPJ invalid
		switch e2eBad(i) {
		case "data":
			wantRej = append(wantRej, e2eKey(i)+" 16")
		case "cpf":
			wantRej = append(wantRej, e2eKey(i)+" 46")
		}
	}
	if strings.Join(rejected, ", ") != strings.Join(wantRej, ", ") {
		t.Errorf("rejected: %v, want %v", rejected, wantRej)
	}

	// more payments: the second retorno holds only them
	more := map[string]bool{}
	for i := 101; i <= 120; i++ {
		more[e2eKey(i)] = true
	}
	e2ePay(t, runs, dir, more)
	e2eRun(t, exitOK, "status", dir)
	ret2 := filepath.Join(work, "RET2.RET")
	e2eRun(t, exitOK, "retorno", dir, "-o", ret2)
	want = want[:0]
	for i := 101; i <= 120; i++ {
		v := fmt.Sprint(e2eCents(i))
		want = append(want, fmt.Sprintf("%s 06 10022027 %s %s", e2eKey(i), v, v))
	}
	if got := retornoEvents(t, ret2); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("second retorno:\n%s", diffLines(got, want))
	}
}

// diffLines lists what one side has and the other does not.
func diffLines(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	for _, s := range want {
		w[s] = true
	}
	var b strings.Builder
	for _, s := range want {
		if !g[s] {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	for _, s := range got {
		if !w[s] {
			fmt.Fprintf(&b, "+ %s\n", s)
		}
	}
	return b.String()
}
