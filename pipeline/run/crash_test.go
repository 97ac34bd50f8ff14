package run_test

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox"
)

// The crash tests build the real binary, run a sandbox as a separate
// process, run jobs against it that SIGKILL themselves at chosen points
// (REMESSA_CRASH_AT=phase:n), resume them, and check that the sandbox holds
// exactly one charge per row.

// TestMain starts building the binary at once, so the build overlaps the
// package's other tests instead of delaying the crash tests.
func TestMain(m *testing.M) {
	if spec := os.Getenv(scaleChildEnv); spec != "" {
		os.Exit(scaleChild(spec))
	}
	flag.Parse()
	if run := flag.Lookup("test.run").Value.String(); !testing.Short() && (run == "" || strings.Contains(run, "Crash")) {
		runtest.BuildAhead()
	}
	code := m.Run()
	runtest.RemoveBinary()
	os.Exit(code)
}

func binary(t testing.TB) string { return runtest.Binary(t) }

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// sandboxProc is `remessa sandbox` running as its own process.
type sandboxProc struct {
	URL  string
	Data string
	cmd  *exec.Cmd
}

func startSandboxProc(t testing.TB, data string, flags ...string) *sandboxProc {
	t.Helper()
	addr := freePort(t)
	args := append([]string{"sandbox", "--addr", addr, "--data", data, "--client-id", testClientID,
		"--client-secret", testClientSecret, "--log-level", "error"}, flags...)
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &sandboxProc{URL: "http://" + addr, Data: data, cmd: cmd}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	for i := 0; i < 200; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return p
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("sandbox process did not listen on %s", addr)
	return nil
}

// runBin runs the binary and returns its exit code (-9 when killed by SIGKILL).
func runBin(t testing.TB, env []string, args ...string) (int, string) {
	t.Helper()
	return runtest.Exec(t, append(env, "REMESSA_CLIENT_ID="+testClientID, "REMESSA_CLIENT_SECRET="+testClientSecret), args...)
}

type crashCase struct {
	kind string
	at   string // phase:n
}

var crashPoints = []crashCase{
	{"carnets", "post-intent:1"}, {"carnets", "post-intent:9"}, {"carnets", "post-sent:1"},
	{"carnets", "post-sent:14"}, {"carnets", "post-sent:30"},
	{"boletos", "post-intent:4"}, {"boletos", "post-sent:2"}, {"boletos", "post-sent:19"}, {"boletos", "post-intent:30"},
	{"cobv", "split-config:1"}, {"cobv", "lote-intent:1"}, {"cobv", "lote-sent:1"}, {"cobv", "lote-sent:2"},
	{"cobv", "lote-intent:3"}, {"cobv", "lote-poll:1"}, {"cobv", "lote-poll:3"}, {"cobv", "link:1"},
	{"cobv", "link:12"}, {"cobv", "link:27"}, {"cobv", "fetch:1"}, {"cobv", "fetch:3"},
}

// crashEnv is a shared sandbox process and the accounts a cobv split needs.
type crashEnv struct {
	sb    *sandboxProc
	cl    *api.Client
	chave string
	split string
}

func newCrashEnv(t *testing.T, flags ...string) *crashEnv {
	data := t.TempDir()
	// prepare the data folder: a second account for the split, the key
	srv, err := sandbox.New(sandbox.Config{DataDir: data, ClientID: testClientID, ClientSecret: testClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := srv.Auth().CreateAccount(context.Background(), "Federação")
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	chave := rn.PixKey
	rn.Close()
	e := &crashEnv{sb: startSandboxProc(t, data, flags...), chave: chave}
	e.split = `    split:
      divisao_tarifa: assumir_total
      minha_parte: {tipo: porcentagem, valor: 80%}
      repasses:
        - {tipo: porcentagem, valor: 20%, cnpj: "` + acc.CNPJ + `", conta: "` + acc.Conta + `"}`
	c, err := api.New(api.Config{BaseURL: e.sb.URL, ClientID: testClientID, ClientSecret: testClientSecret, MaxRetries: 8})
	if err != nil {
		t.Fatal(err)
	}
	e.cl = c
	return e
}

func (e *crashEnv) job(t *testing.T, kind string, rows int, seed int) (string, []payer) {
	dir := t.TempDir()
	ps := payersOn(rows, seed, e.chave)
	job := writeJob(t, dir, kind, ps, "service: sandbox\nconcurrency: 4")
	s, _ := readFile(job)
	switch kind {
	case "carnets":
		s = strings.Replace(s, "repeats: 3", "repeats: 2", 1)
	case "cobv":
		s = strings.Replace(s, "    batch: {size: 10}", "    batch: {size: 10}\n"+e.split, 1)
	}
	writeFileT(t, job, s)
	return job, ps
}

// crashAndResume runs job killing it at points[0], resumes it killing
// each resume at the next point (every point must be reached: the process
// ends by SIGKILL), then resumes until the run is complete, and checks the
// sandbox. An empty points runs without a crash.
func (e *crashEnv) crashAndResume(t *testing.T, kind string, points []string, seed int) {
	job, ps := e.job(t, kind, 30, seed)
	crashAt := func(i int) []string {
		if i < len(points) {
			return []string{"REMESSA_CRASH_AT=" + points[i]}
		}
		return nil
	}
	code, out := runBin(t, crashAt(0), "run", job, "--base-url", e.sb.URL, "--quiet")
	runs, _ := filepath.Glob(filepath.Join(filepath.Dir(job), "remessa-out", "2*"))
	if len(runs) != 1 {
		t.Fatalf("%d run folders after the crash: exit %d\n%s", len(runs), code, out)
	}
	dir := runs[0]
	for i := 0; i < len(points); i++ {
		if i > 0 {
			code, out = runBin(t, crashAt(i), "resume", dir, "--base-url", e.sb.URL, "--quiet")
		}
		// Under injected faults a process may stop cleanly before the
		// point (exit 3: the service kept failing, "resume" goes on): that
		// is the product working; resume it towards the same point.
		for try := 0; code == 3 && try < 5; try++ {
			code, out = runBin(t, crashAt(i), "resume", dir, "--base-url", e.sb.URL, "--quiet")
		}
		if code != -int(syscall.SIGKILL) {
			t.Fatalf("crash point %s (process %d) not reached: exit %d\n%s", points[i], i, code, out)
		}
	}
	for i := 0; ; i++ {
		code, out = runBin(t, nil, "resume", dir, "--base-url", e.sb.URL, "--quiet")
		if code == 0 {
			break
		}
		if i == 3 {
			t.Fatalf("resume after %v: exit %d\n%s", points, code, out)
		}
	}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Run.Complete || res.Totals.Issued.Rows != len(ps) {
		t.Fatalf("after %v: complete %v, totals %+v", points, res.Run.Complete, res.Totals)
	}
	e.checkOnce(t, kind, res, ps)
}

// checkOnce asserts the sandbox holds exactly one charge (carnet) per row
// of the run, and the results name it.
func (e *crashEnv) checkOnce(t *testing.T, kind string, res *results.Results, ps []payer) {
	t.Helper()
	switch kind {
	case "carnets", "boletos":
		ct := map[string]string{"carnets": "carnet", "boletos": "billet"}[kind]
		perCID := map[string]map[int64]int{} // custom_id -> carnet or charge id -> parcels
		for _, c := range listCharges(t, e.cl, ct) {
			if c.CustomID == nil || !strings.HasPrefix(*c.CustomID, "rm-"+res.Run.ID+"-") {
				continue
			}
			id := c.ID
			if c.Payment != nil && c.Payment.Carnet != nil {
				id = c.Payment.Carnet.CarnetID
			}
			if perCID[*c.CustomID] == nil {
				perCID[*c.CustomID] = map[int64]int{}
			}
			perCID[*c.CustomID][id]++
		}
		if len(perCID) != len(ps) {
			t.Errorf("%d custom_ids of run %s in the sandbox, want %d", len(perCID), res.Run.ID, len(ps))
		}
		for i, p := range ps {
			cid := run.CustomID(res.Run.ID, p.Key)
			got := perCID[cid]
			if len(got) != 1 {
				t.Errorf("row %s: %d %s with custom_id %s, want exactly 1", p.Key, len(got), kind, cid)
				continue
			}
			for id, n := range got {
				r := res.Rows[i]
				if kind == "carnets" && (r.CarnetID != id || n != 2) || kind == "boletos" && (len(r.ChargeIDs) != 1 || r.ChargeIDs[0] != id) {
					t.Errorf("row %s: sandbox %d (%d charges), results %+v", p.Key, id, n, r.ChargeIDs)
				}
			}
		}
	case "cobv":
		count := runtest.CobvOfBatches(t, e.cl, res.Rows)
		if len(count) != len(ps) {
			t.Errorf("%d cobv in the run's batches, want %d", len(count), len(ps))
		}
		for i, p := range ps {
			r := res.Rows[i]
			if count[r.Txid] != 1 {
				t.Errorf("row %s: txid %s appears %d times", p.Key, r.Txid, count[r.Txid])
			}
			sp, err := e.cl.GetCobSplit(context.Background(), true, r.Txid)
			if err != nil || sp.Config.ID == "" {
				t.Errorf("row %s: split link: %v %+v", p.Key, err, sp)
			}
			if r.PixCopiaECola == "" {
				t.Errorf("row %s: no pixCopiaECola", p.Key)
			}
		}
	}
}

// TestCrashResume kills a run once at each of 21 points spread over
// every phase: before a POST is sent (post-intent), between a POST's
// answer and its journal entry (post-sent), around a split configuration,
// a batch PUT (lote-intent, lote-sent), while polling a batch (lote-poll),
// while linking (link) and while fetching the charges by page (fetch).
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds the binary; skipped with -short")
	}
	t.Parallel()
	e := newCrashEnv(t)
	for i, c := range crashPoints {
		t.Run(c.kind+"/"+c.at, func(t *testing.T) {
			t.Parallel()
			e.crashAndResume(t, c.kind, []string{c.at}, 10+i)
		})
	}
}

// TestCrashResumeFaults repeats the crash test with 10% of each fault the
// sandbox can inject: 500, 503, 429 (Retry-After 1 s) and connections
// dropped after the request was processed. Each run is killed at several
// points in turn (the run, then each resume), 12 points in all over every
// phase, before it is resumed to its end.
func TestCrashResumeFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("long crash test; skipped with -short")
	}
	t.Parallel()
	// the route only the checks use (a charge's split link) has no faults
	const check = "GET /v2/gn/split/cobv/:txid=0"
	e := newCrashEnv(t, "--fault-500", "0.1", "--fault-503", "0.1", "--fault-429", "0.1", "--fault-drop", "0.1", "--fault-seed", "7",
		"--fault-500", check, "--fault-503", check, "--fault-429", check, "--fault-drop", check)
	chains := []struct {
		kind   string
		points []string
	}{
		{"carnets", []string{"post-intent:3", "post-sent:4", "post-sent:6"}},
		{"boletos", []string{"post-sent:2", "post-intent:5", "post-sent:3"}},
		{"cobv", []string{"split-config:1", "lote-sent:1", "lote-poll:2"}},
		{"cobv", []string{"lote-intent:2", "link:4", "fetch:1"}},
	}
	for i, c := range chains {
		t.Run(c.kind+"/"+strings.Join(c.points, ","), func(t *testing.T) {
			t.Parallel()
			e.crashAndResume(t, c.kind, c.points, 100+i)
		})
	}
}

var _ = json.Marshal
var _ = http.MethodGet
