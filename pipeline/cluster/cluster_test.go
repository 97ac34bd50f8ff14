package cluster_test

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/pgtest"
	"remessa/pipeline"
	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
	"remessa/sandbox"
)

// The cluster tests run the real binary: a `remessa sandbox` process, a
// throw-away PostgreSQL (internal/pgtest), `remessa worker` processes and
// `remessa run --db`, and check through the sandbox's API that it holds
// exactly one charge per row. They run in parallel, each on a database
// of its own (pgtest.DSN) with its own sandbox and workers: much of their
// time is waiting (a killed worker's unit for its lease and the workers'
// RescueDead round, every 2 s; the sandbox's injected latency), not
// working.

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		runtest.BuildAhead()
	}
	code := m.Run()
	pgtest.Stop()
	runtest.RemoveBinary()
	os.Exit(code)
}

const (
	clientID     = "Client_Id_cluster"
	clientSecret = "Client_Secret_cluster"
)

// env is a sandbox process, a database and a folder for jobs and logs.
type env struct {
	bin, dsn, url, work, chave string
	lease                      time.Duration // the workers' --unit-timeout
	urls                       []string      // sandbox instances the workers alternate between (none: url)
	split                      string        // the YAML of a Pix split paying a second account
	withSplit                  bool          // cobv jobs have the split
	batch                      int           // crashRun's cobv batch size (default 1000)
	cl                         *api.Client
	mu                         sync.Mutex
	workers                    []*exec.Cmd
	exited                     map[*exec.Cmd]chan struct{} // closed when the worker's Wait returns
}

// exitedCh is closed when worker cmd has exited (its Wait returned); reading
// cmd.ProcessState instead would race with Wait.
func (e *env) exitedCh(cmd *exec.Cmd) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.exited[cmd]
}

func newEnv(t testing.TB) *env { return newEnvWith(t, false, nil) }

// newEnvWith is newEnv with, when shared, the sandbox as two instances
// over one PostgreSQL database (the workers alternate between them) that
// inject faults, and a third instance without faults for the checks.
func newEnvWith(t testing.TB, shared bool, faults []string) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs processes; skipped with -short")
	}
	e := &env{dsn: pgtest.DSN(t), bin: runtest.Binary(t), work: t.TempDir(), lease: 8 * time.Second}
	if os.Getenv("REMESSA_CLUSTER_KEEP") != "" { // keep the logs to look at
		e.work, _ = os.MkdirTemp("", "remessa-cluster-")
		t.Logf("work folder %s", e.work)
	}
	cfg := sandbox.Config{DataDir: filepath.Join(e.work, "sandbox"), ClientID: clientID, ClientSecret: clientSecret}
	if shared {
		cfg.DB, cfg.DataDir = pgtest.DSN(t), ""
	}
	srv, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// a second account, which a cobv job's Pix split pays
	acc, err := srv.Auth().CreateAccount(context.Background(), "Federação")
	if err != nil {
		t.Fatal(err)
	}
	e.split = `
    split:
      divisao_tarifa: assumir_total
      minha_parte: {tipo: porcentagem, valor: 80%}
      repasses:
        - {tipo: porcentagem, valor: 20%, cnpj: "` + acc.CNPJ + `", conta: "` + acc.Conta + `"}`
	rn, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	e.chave = rn.PixKey
	rn.Close()
	where := []string{"--data", cfg.DataDir}
	if shared {
		where = []string{"--db", cfg.DB}
		e.urls = []string{e.startSandbox(t, "a", append(where, faults...)), e.startSandbox(t, "b", append(where, faults...))}
		e.url = e.urls[0]
		check := e.startSandbox(t, "check", where)
		if e.cl, err = api.New(api.Config{BaseURL: check, ClientID: clientID, ClientSecret: clientSecret, MaxRetries: 8}); err != nil {
			t.Fatal(err)
		}
	} else {
		e.url = e.startSandbox(t, "", append(where, faults...))
		if e.cl, err = api.New(api.Config{BaseURL: e.url, ClientID: clientID, ClientSecret: clientSecret, MaxRetries: 8}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(e.stopWorkers)
	return e
}

// startSandbox starts a `remessa sandbox` process and returns its URL.
func (e *env) startSandbox(t testing.TB, name string, flags []string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	args := append([]string{"sandbox", "--addr", addr, "--client-id", clientID, "--client-secret", clientSecret, "--log-level", "error"}, flags...)
	cmd := exec.Command(e.bin, args...)
	sbLog, err := os.Create(filepath.Join(e.work, "sandbox"+name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = sbLog, sbLog
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait(); sbLog.Close() })
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		if i == 400 {
			b, _ := os.ReadFile(sbLog.Name())
			t.Fatalf("sandbox %s did not listen on %s:\n%s", name, addr, b)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (e *env) environ() []string {
	return append(os.Environ(), "REMESSA_CLIENT_ID="+clientID, "REMESSA_CLIENT_SECRET="+clientSecret)
}

// startWorker starts one `remessa worker` process with env added to its
// environment; slot names its log.
func (e *env) startWorker(t testing.TB, slot int, env ...string) *exec.Cmd {
	t.Helper()
	args := []string{"worker", "--db", e.dsn, "--units", "2", "--unit-timeout", e.lease.String(), "--log-dir", filepath.Join(e.work, "logs")}
	if len(e.urls) > 0 {
		args = append(args, "--base-url", e.urls[slot%len(e.urls)])
	}
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(e.environ(), env...)
	f, err := os.OpenFile(filepath.Join(e.work, fmt.Sprintf("worker%d.log", slot)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); f.Close(); close(exited) }()
	e.mu.Lock()
	e.workers = append(e.workers, cmd)
	if e.exited == nil {
		e.exited = map[*exec.Cmd]chan struct{}{}
	}
	e.exited[cmd] = exited
	e.mu.Unlock()
	return cmd
}

func (e *env) stopWorkers() {
	e.mu.Lock()
	ws := e.workers
	e.workers = nil
	e.mu.Unlock()
	for _, w := range ws {
		w.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range ws {
		select {
		case <-e.exitedCh(w):
		case <-time.After(5 * time.Second):
		}
		w.Process.Kill()
	}
}

// job writes a job of kind (carnets or cobv) for n rows (keys prefix…)
// and returns its path.
func (e *env) job(t testing.TB, kind, prefix string, n, batch int) string {
	t.Helper()
	return e.jobIn(t, prefix, kind, prefix, n, batch)
}

// jobIn is job in the folder name.
func (e *env) jobIn(t testing.TB, name, kind, prefix string, n, batch int) string {
	t.Helper()
	dir := filepath.Join(e.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("Código;Nome;CPF;Valor;Chave\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%s%05d;Pagador %d;%s;%d,%02d;%s\n", prefix, i, i, runtest.CPF(fmt.Sprintf("%09d", 100000000+i*7919)), 100+i%500, i%100, e.chave)
	}
	if err := os.WriteFile(filepath.Join(dir, "pagadores.csv"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	issue := `  carnets:
    repeats: 2
    first_due: +20d
    items: [{name: "Mensalidade {{ .Código }}", value: "{{ .Valor }}"}]`
	if kind == "boletos" {
		issue = `  boletos:
    due: +15d
    items: [{name: "Serviço {{ .Código }}", value: "{{ .Valor }}"}]`
	}
	if kind == "cobv" {
		issue = fmt.Sprintf(`  cobv:
    due: +25d
    chave: "{{ .Chave }}"
    solicitacao: "Associado {{ .Código }}"
    batch: {size: %d}`, batch)
		if e.withSplit {
			issue += e.split
		}
	}
	job := fmt.Sprintf("version: 1\nname: Cluster %s %s\ninput:\n  file: pagadores.csv\n  key: Código\nissue:\n%s\nservice: sandbox\nconcurrency: 8\nreports:\n  formats: [json]\n", kind, prefix, issue)
	path := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs `remessa run --db` on job and returns its results (nil, the
// test marked failed, when it fails: it runs on other goroutines).
func (e *env) run(t testing.TB, job string, extra ...string) (*results.Results, string) {
	t.Helper()
	return e.runExit(t, job, 0, extra...)
}

// runExit is run for a job whose run ends with exit code want (1: some
// rows refused or denied).
func (e *env) runExit(t testing.TB, job string, want int, extra ...string) (*results.Results, string) {
	t.Helper()
	args := append([]string{"run", job, "--db", e.dsn, "--base-url", e.url}, extra...)
	// a run that does not end in time fails the test with what the
	// workers were doing, instead of hanging it
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if want != 0 && errors.As(err, &ee) && ee.ExitCode() == want {
		err = nil
	}
	if err != nil {
		t.Errorf("remessa run --db %s: %v\n%s%s", job, err, tail(out, 4000), e.workerLogs())
		return nil, string(out)
	}
	runs, _ := filepath.Glob(filepath.Join(filepath.Dir(job), "remessa-out", "2*"))
	if len(runs) != 1 {
		t.Errorf("%d run folders\n%s", len(runs), out)
		return nil, string(out)
	}
	res, err := results.Load(filepath.Join(runs[0], "results.json"))
	if err != nil {
		t.Errorf("results.json: %v\n%s", err, out)
	}
	return res, string(out)
}

// runTimeout is how long a test waits for a `remessa run --db`.
func runTimeout() time.Duration {
	if os.Getenv("REMESSA_CLUSTER_FULL") != "" {
		return 20 * time.Minute
	}
	return 4 * time.Minute
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// workerLogs is the end of each worker's log (what it said of its units).
func (e *env) workerLogs() string {
	var sb strings.Builder
	logs, _ := filepath.Glob(filepath.Join(e.work, "worker*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		var keep []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "level=") {
				keep = append(keep, line)
			}
		}
		fmt.Fprintf(&sb, "\n%s:\n%s", filepath.Base(l), strings.Join(keep[max(0, len(keep)-15):], "\n"))
	}
	return sb.String()
}

// checkOnce asserts the sandbox holds exactly one charge per row of the
// run and the results say every row was issued, with the sandbox's ids.
func (e *env) checkOnce(t testing.TB, res *results.Results, kind string, n int) {
	t.Helper()
	if !res.Run.Complete || res.Totals.Issued.Rows != n || len(res.Rows) != n {
		t.Fatalf("run %s: complete %v, %d issued of %d rows (%d in results), totals %+v", res.Run.ID, res.Run.Complete, res.Totals.Issued.Rows, n, len(res.Rows), res.Totals)
	}
	switch kind {
	case "carnets":
		perCID := map[string]map[int64]int{}
		for _, c := range e.listCharges(t, "carnet") {
			if c.CustomID == nil || !strings.HasPrefix(*c.CustomID, "rm-"+res.Run.ID+"-") || c.Payment == nil || c.Payment.Carnet == nil {
				continue
			}
			if perCID[*c.CustomID] == nil {
				perCID[*c.CustomID] = map[int64]int{}
			}
			perCID[*c.CustomID][c.Payment.Carnet.CarnetID]++
		}
		if len(perCID) != n {
			t.Errorf("%d custom_ids of run %s in the sandbox, want %d", len(perCID), res.Run.ID, n)
		}
		for _, r := range res.Rows {
			got := perCID[r.CustomID]
			if len(got) != 1 {
				t.Errorf("row %s: %d carnets with custom_id %s, want exactly 1", r.Key, len(got), r.CustomID)
				continue
			}
			for id, parcels := range got {
				if r.CarnetID != id || parcels != 2 || r.Outcome != results.Issued {
					t.Errorf("row %s: sandbox carnet %d (%d parcels), results carnet %d %s", r.Key, id, parcels, r.CarnetID, r.Outcome)
				}
			}
		}
	case "boletos":
		perCID := map[string][]int64{}
		for _, c := range e.listCharges(t, "billet") {
			if c.CustomID != nil && strings.HasPrefix(*c.CustomID, "rm-"+res.Run.ID+"-") {
				perCID[*c.CustomID] = append(perCID[*c.CustomID], c.ID)
			}
		}
		if len(perCID) != n {
			t.Errorf("%d custom_ids of run %s in the sandbox, want %d", len(perCID), res.Run.ID, n)
		}
		for _, r := range res.Rows {
			if got := perCID[r.CustomID]; len(got) != 1 || len(r.ChargeIDs) != 1 || r.ChargeIDs[0] != got[0] {
				t.Errorf("row %s: slips %v with custom_id %s in the sandbox (want exactly 1), results %v", r.Key, got, r.CustomID, r.ChargeIDs)
			}
		}
	case "cobv":
		count := runtest.CobvOfBatches(t, e.cl, res.Rows)
		if len(count) != n {
			t.Errorf("%d cobv in the run's batches, want %d", len(count), n)
		}
		for _, r := range res.Rows {
			if count[r.Txid] != 1 || r.PixCopiaECola == "" || r.Outcome != results.Issued {
				t.Errorf("row %s: txid %s in the sandbox %d times (want 1), copia e cola %q, %s", r.Key, r.Txid, count[r.Txid], r.PixCopiaECola, r.Outcome)
			}
			if e.withSplit {
				if sp, err := e.cl.GetCobSplit(context.Background(), true, r.Txid); err != nil || sp.Config.ID == "" {
					t.Errorf("row %s: split link: %v %+v", r.Key, err, sp)
				}
			}
		}
	}
}

type listed = runtest.Listed

func (e *env) listCharges(t testing.TB, chargeType string) []listed {
	return runtest.ListCharges(t, e.cl, chargeType)
}

// TestClusterTwoWorkers: `remessa run --db` enqueues a cobv job (5
// batches) and a carnet job (3 units of rows); two `remessa worker`
// processes issue them; each row is in the sandbox exactly once and the
// run folder's results.json says every row was issued. The runs index,
// `remessa status --db` and `remessa report --db` read the same.
func TestClusterTwoWorkers(t *testing.T) {
	t.Parallel()
	// the split configuration answers slowly: the other batches start
	// while it is in flight, and must wait for it rather than send it too
	e := newEnvWith(t, false, []string{"--fault-latency", "PUT /v2/gn/split/config/:id=1500ms"})
	e.withSplit = true
	e.startWorker(t, 1)
	e.startWorker(t, 2)
	cobv := e.job(t, "cobv", "V", 250, 50)
	carnets := e.job(t, "carnets", "C", 150, 0)
	var wg sync.WaitGroup
	var resV, resC *results.Results
	wg.Add(2)
	go func() { defer wg.Done(); resV, _ = e.run(t, cobv) }()
	go func() { defer wg.Done(); resC, _ = e.run(t, carnets) }()
	wg.Wait()
	if t.Failed() {
		return
	}
	e.checkOnce(t, resV, "cobv", 250)
	e.checkOnce(t, resC, "carnets", 150)
	// another job repeating 10 of those rows (key and due date) is warned
	// of it by the database's runs index
	again := e.jobIn(t, "V2", "cobv", "V", 10, 50)
	resV2, out2 := e.run(t, again)
	if resV2 == nil || !strings.Contains(out2, "10 da execução "+resV.Run.ID) {
		t.Errorf("a job repeating 10 rows of run %s: no warning naming it:\n%s", resV.Run.ID, out2)
	}
	// five batches on two workers sent the split configuration once
	j, err := journal.OpenPostgres(context.Background(), e.dsn, resV.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := j.CallCounts(context.Background())
	j.Close()
	if err != nil || len(calls[pipeline.RouteSplitConfig]) != 1 || calls[pipeline.RouteSplitConfig][journal.CallOK] != 1 {
		t.Errorf("split configuration calls %v (%v), want exactly one, ok", calls[pipeline.RouteSplitConfig], err)
	}

	// both workers took units (the log names each unit a worker started)
	for _, w := range []string{"worker1.log", "worker2.log"} {
		b, _ := os.ReadFile(filepath.Join(e.work, w))
		if !strings.Contains(string(b), "unidade ") {
			t.Errorf("%s took no unit:\n%s", w, b)
		}
	}
	// the same job again is refused by the database's runs index
	cmd := exec.Command(e.bin, "run", cobv, "--db", e.dsn, "--base-url", e.url, "--quiet")
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), resV.Run.ID) {
		t.Errorf("the same job again: %v, want exit 2 naming %s\n%s", err, resV.Run.ID, out)
	}
	// status and report from the database
	cmd = exec.Command(e.bin, "status", "--db", e.dsn, resC.Run.ID)
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "issued 150") || !strings.Contains(string(out), "3 de 3 concluídas") {
		t.Errorf("status --db: %v\n%s", err, out)
	}
	rep := filepath.Join(e.work, "rep")
	cmd = exec.Command(e.bin, "report", "--db", e.dsn, "--out", rep, resV.Run.ID)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("report --db: %v\n%s", err, out)
	}
	r2, err := results.Load(filepath.Join(rep, "results.json"))
	if err != nil || r2.Totals.Issued.Rows != 250 || r2.Run.ID != resV.Run.ID {
		t.Errorf("report --db results: %v %+v", err, r2)
	}
	// slips, detached: run --detach returns the run id at once; resume
	// --db waits for the workers and writes the results into the run folder
	slips := e.job(t, "boletos", "B", 100, 0)
	cmd = exec.Command(e.bin, "run", slips, "--db", e.dsn, "--base-url", e.url, "--detach")
	cmd.Env = e.environ()
	out, err = cmd.Output()
	id := strings.TrimSpace(string(out))
	if err != nil || strings.Count(id, "-") != 2 {
		t.Fatalf("run --detach: %v, printed %q, want the run id", err, out)
	}
	cmd = exec.Command(e.bin, "resume", "--db", e.dsn, id, "--quiet")
	cmd.Env = e.environ()
	if out, err = cmd.CombinedOutput(); err != nil {
		t.Fatalf("resume --db %s: %v\n%s", id, err, out)
	}
	resB, err := results.Load(filepath.Join(filepath.Dir(slips), "remessa-out", id, "results.json"))
	if err != nil {
		t.Fatalf("results of the detached run: %v\n%s", err, out)
	}
	e.checkOnce(t, resB, "boletos", 100)
}

// TestClusterLeaseShorterThanUnit: a unit that takes longer than its
// lease (1 s; 64 carnets answered in 300 ms each) is not cut off: it
// ends on its first attempt, and each row is in the sandbox once.
func TestClusterLeaseShorterThanUnit(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, false, []string{"--fault-latency", "POST /v1/carnet=300ms"})
	e.lease = time.Second
	e.startWorker(t, 1)
	e.startWorker(t, 2)
	res, _ := e.run(t, e.job(t, "carnets", "C", 128, 0))
	if res == nil {
		return
	}
	e.checkOnce(t, res, "carnets", 128)
	if logs := e.workerLogs(); strings.Contains(logs, "interrompida") || !strings.Contains(logs, "concluída") {
		t.Errorf("a unit was cut off by its lease, or none ended:%s", logs)
	}
}

// crashSize is the crash test's size: small in CI, the issue's full size
// with REMESSA_CLUSTER_FULL=1 (and a longer lease: a batch of 1000 takes
// longer on a machine running three workers, a sandbox and Postgres).
func crashSize() (cobv, carnets, kills int, lease time.Duration) {
	if os.Getenv("REMESSA_CLUSTER_FULL") != "" {
		return 50000, 2000, 10, 30 * time.Second
	}
	return 3000, 300, 4, 8 * time.Second
}

// TestClusterCrash: a cobv job and a carnet job run by 3 worker processes
// that are SIGKILLed at random moments and restarted (and two of them kill
// themselves at chosen points first: between a carnet's answer and its
// journal entry, and between a batch PUT's answer and its entry); every
// row is in the sandbox exactly once and the results say so. A killed
// worker's unit is given back to the queue once its lease is over and its
// lock is free (--unit-timeout 8s; the workers' cluster.RescueDead, every
// 2 s, or River's rescuer, every 30 s) and resumed by another worker from
// the journal: the carnet sent without its answer journaled is found by
// its custom_id and adopted, not sent again.
func TestClusterCrash(t *testing.T) {
	t.Parallel()
	nV, nC, kills, lease := crashSize()
	e := newEnv(t)
	e.lease = lease
	e.crashRun(t, nV, nC, kills, true)
}

// TestClusterCrashFaults is TestClusterCrash with the sandbox as two
// instances over one PostgreSQL (the workers alternate between them),
// each injecting 10% of 500, 503, 429 and connections dropped after the
// request was processed.
func TestClusterCrashFaults(t *testing.T) {
	t.Parallel()
	nV, nC, kills, lease := crashSize()
	if os.Getenv("REMESSA_CLUSTER_FULL") == "" {
		nV, nC, kills = 1000, 128, 3
	}
	// under faults a unit retries its calls with backoff: a lease of 8 s
	// can end every attempt before its batch does
	e := newEnvWith(t, true, []string{"--fault-500", "0.1", "--fault-503", "0.1", "--fault-429", "0.1", "--fault-drop", "0.1", "--fault-seed", "7"})
	e.lease, e.batch = max(lease, 15*time.Second), 250 // short units: a lease ends fewer of them
	if os.Getenv("REMESSA_CLUSTER_FULL") != "" {
		e.lease, e.batch = time.Minute, 500
	}
	e.crashRun(t, nV, nC, kills, false)
}

// crashRun issues nV cobv and nC carnets with three workers killed kills
// times at random, and checks the sandbox holds one charge per row;
// adopted: also that the carnet whose answer died with its worker was
// adopted by its custom_id.
func (e *env) crashRun(t *testing.T, nV, nC, kills int, adopted bool) {
	const workers = 3
	var mu sync.Mutex
	slots := make([]*exec.Cmd, workers)
	done := make(chan struct{})
	var sup sync.WaitGroup
	first := [][]string{{"REMESSA_CRASH_AT=post-sent:3"}, {"REMESSA_CRASH_AT=lote-sent:2"}, {"REMESSA_CRASH_AT=post-sent:9"}}
	for i := range slots {
		sup.Add(1)
		go func() { // restarts the worker of slot i whenever it dies
			defer sup.Done()
			env := first[i]
			for {
				cmd := e.startWorker(t, i+1, env...)
				env = nil
				mu.Lock()
				slots[i] = cmd
				mu.Unlock()
				select {
				case <-done:
					return
				case <-e.exitedCh(cmd):
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
	}
	cobv := e.job(t, "cobv", "V", nV, cmp.Or(e.batch, 1000))
	carnets := e.job(t, "carnets", "C", nC, 0)
	var killed []string
	gap := 300 * time.Millisecond // kills every 0.3 to 1.5 s (the full size: 2 to 10 s, over its minutes)
	if nV > 10000 {
		gap = 2 * time.Second
	}
	go func() {
		rng := rand.New(rand.NewPCG(13, uint64(nV)))
		for k := 0; k < kills; k++ {
			select {
			case <-done:
				return
			case <-time.After(gap + time.Duration(rng.Int64N(int64(4*gap)))):
			}
			i := rng.IntN(workers)
			mu.Lock()
			slots[i].Process.Signal(syscall.SIGKILL)
			killed = append(killed, fmt.Sprintf("worker %d at %s", i+1, time.Now().Format("15:04:05.000")))
			mu.Unlock()
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	var resV, resC *results.Results
	wg.Add(2)
	go func() { defer wg.Done(); resV, _ = e.run(t, cobv) }()
	go func() { defer wg.Done(); resC, _ = e.run(t, carnets) }()
	wg.Wait()
	close(done)
	sup.Wait()
	mu.Lock()
	t.Logf("%d cobv and %d carnets in %s with %d random kills: %s", nV, nC, time.Since(start).Round(time.Millisecond), len(killed), strings.Join(killed, ", "))
	mu.Unlock()
	if t.Failed() {
		return
	}
	e.checkOnce(t, resV, "cobv", nV)
	e.checkOnce(t, resC, "carnets", nC)
	// the carnet whose answer was lost with its worker was looked up, not resent
	b, err := os.ReadFile(filepath.Join(e.work, "logs", resC.Run.ID, "run.log"))
	if adopted && (err != nil || !strings.Contains(string(b), "found: adopted")) {
		t.Errorf("no carnet adopted after the crash between its answer and its journal entry (%v)", err)
		for i := 1; i <= workers; i++ {
			w, _ := os.ReadFile(filepath.Join(e.work, fmt.Sprintf("worker%d.log", i)))
			t.Logf("worker%d.log:\n%s", i, w)
		}
	}
}

// BenchmarkClusterWorkers: rows per second of a cobv job (6,000 rows,
// batches of 500) and a carnet job (600 rows) run together by 1, 2 and 3
// worker processes against one sandbox process.
func BenchmarkClusterWorkers(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			e := newEnv(b)
			for i := 0; i < n; i++ {
				e.startWorker(b, i+1)
			}
			rows := 0
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				cobv := e.job(b, "cobv", fmt.Sprintf("V%d", it), 6000, 500)
				carnets := e.job(b, "carnets", fmt.Sprintf("C%d", it), 600, 0)
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); e.run(b, cobv) }()
				go func() { defer wg.Done(); e.run(b, carnets) }()
				wg.Wait()
				rows += 6600
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			e.stopWorkers()
		})
	}
}

// Mask keeps a database URL's password out of messages, in the user part
// and in the query alike; a URL that is not Postgres is not echoed.
func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://remessa:s3gr3d0@db.example.com:5432/cobranca?sslmode=require": "postgres://remessa:xxxxx@db.example.com:5432/cobranca?sslmode=require",
		"postgresql://u@h/db?password=s3gr3d0":                                    "postgresql://u@h/db?password=xxxxx",
		"postgres://u@h/db":                                                       "postgres://u@h/db",
		"mysql://u:s3gr3d0@h/db":                                                  "postgres://…",
	} {
		if got := cluster.Mask(in); got != want || strings.Contains(got, "s3gr3d0") {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := cluster.Open(context.Background(), "mysql://u:s3gr3d0@h/db"); err == nil || strings.Contains(err.Error(), "s3gr3d0") {
		t.Errorf("Open of a URL that is not Postgres: %v", err)
	}
}
