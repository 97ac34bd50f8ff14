// Package runtest is for the tests of the packages that follow a run
// (status, reconciliation, actions, listen): it issues a sample job on a
// shared embedded sandbox in a temporary folder, and makes valid CPFs.
package runtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/sandbox"
)

// Issued is a run made for a test.
type Issued struct {
	Work    string           // the temporary folder holding the job, its sheet and the runs
	Dir     string           // the run folder
	Sandbox *sandbox.Running // the shared embedded sandbox, closed when the test ends
	Results *results.Results // read from results.json: rows included
	Outcome *run.Outcome     // its Results are the same, rows included
}

// NoEnv is an environment with no variable (a job's ${VAR:default} takes
// its default).
func NoEnv(string) (string, bool) { return "", false }

// Copy copies files from a folder (e.g. "../../samples/escola") into dir.
func Copy(t testing.TB, from, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue runs the job file job of folder work (already holding the job and
// its sheet) on a new embedded sandbox, and fails the test unless every
// row was issued.
func Issue(t testing.TB, work, job string) *Issued {
	t.Helper()
	rn, err := run.StartEmbedded(filepath.Join(work, "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	out, err := run.Run(context.Background(), filepath.Join(work, job), run.Options{Embedded: rn, RunsDir: filepath.Join(work, "out"), Getenv: NoEnv})
	if err != nil || out.ExitCode() != 0 {
		t.Fatalf("issue %s: %v", job, err)
	}
	// the run's results with their rows (a run returns its totals only;
	// the rows are in results.json): the tests look rows up
	full, err := out.LoadResults()
	if err != nil {
		t.Fatalf("issue %s: %v", job, err)
	}
	out.Results = full
	return &Issued{Work: work, Dir: out.Dir, Sandbox: rn, Results: full, Outcome: out}
}

// Sample copies a sample (its job and sheet) into a temporary folder and
// issues it: Sample(t, "../../samples/escola", "carnes.yaml", "alunos.xlsx").
func Sample(t testing.TB, sample, job string, others ...string) *Issued {
	t.Helper()
	work := t.TempDir()
	Copy(t, sample, work, append([]string{job}, others...)...)
	return Issue(t, work, job)
}

// Client is a client of the sandbox with the embedded application.
func Client(t testing.TB, rn *sandbox.Running) *api.Client {
	t.Helper()
	cl, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// CPF completes nine digits with the CPF check digits.
func CPF(nine string) string {
	d := []byte(nine)
	for _, n := range []int{9, 10} {
		sum := 0
		for i := 0; i < n; i++ {
			sum += int(d[i]-'0') * (n + 1 - i)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		d = append(d, byte('0'+r))
	}
	return string(d)
}

// Cobv issues n due-date Pix charges (keys P00…, R$ 100,00 and up, due in
// 20 days, on the key financeiro@example.com) on a new embedded sandbox.
func Cobv(t testing.TB, n int) *Issued {
	t.Helper()
	work := t.TempDir()
	if err := writeCobv(work, n); err != nil {
		t.Fatal(err)
	}
	return Issue(t, work, "cobv.yaml")
}

// writeCobv writes Cobv's job (cobv.yaml) and its n rows (pix.csv) into
// work.
func writeCobv(work string, n int) error {
	var csv strings.Builder
	csv.WriteString("Código;Nome;CPF;Valor\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&csv, "P%02d;Pagador %d;%s;%d,%02d\n", i, i, CPF(fmt.Sprintf("%09d", 100000000+i*7919)), 100+i, i%100)
	}
	files := map[string]string{"pix.csv": csv.String(), "cobv.yaml": "version: 1\nname: Pix do mês\ninput: {file: pix.csv, key: Código}\n" +
		"issue:\n  cobv:\n    due: +20d\n    chave: financeiro@example.com\n    solicitacao: \"Mensalidade {{ .Código }}\"\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds the remessa command once per test process and returns
// its path. go test puts the go command of its own GOROOT first on PATH,
// so the build uses the same Go. The binary is kept between test
// processes, one per module folder (binaryPath): go build relinks it only
// when its sources or flags changed, so with a warm cache the test
// binaries of a `go test ./...` find it up to date (a check of under a
// CPU-second) instead of each linking one of its own (5 to 6 CPU-s).
func Binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(build)
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// BuildAhead starts building the binary in the background, so a package's
// TestMain can overlap the build with its other tests.
func BuildAhead() { go binOnce.Do(build) }

// RemoveBinary waits for a build under way (a TestMain calls it after the
// tests). The binary stays for the next test process: it is a cache, like
// go's build cache, in the user's cache folder.
func RemoveBinary() { binOnce.Do(func() {}) }

// binaryPath is where the command is built: a folder of the user's cache
// (or the temporary directory) named by a hash of the module's folder, so
// two checkouts of the module (worktrees) each keep their own binary and
// one never replaces the other's.
func binaryPath() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	mod := wd
	for {
		if _, err := os.Stat(filepath.Join(mod, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(mod)
		if up == mod {
			mod = wd // not in the module: a folder of its own still
			break
		}
		mod = up
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	h := fnv.New64a()
	h.Write([]byte(mod))
	dir := filepath.Join(base, "remessa-runtest", fmt.Sprintf("%016x", h.Sum64()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, "remessa"), nil
}

// build runs go build under the machine-wide lock: two test processes
// never write the binary at once, and one that finds it up to date leaves
// it alone. A binary that changes is replaced by a new file (go build
// renames or removes and creates it), so a process still running the old
// one is not disturbed.
func build() {
	defer lockBuild()()
	p, err := binaryPath()
	if err != nil {
		binErr = err
		return
	}
	binPath = p
	if out, err := exec.Command("go", "build", "-o", binPath, "remessa/cmd/remessa").CombinedOutput(); err != nil {
		binErr = fmt.Errorf("go build: %v\n%s", err, out)
	}
}

// lockBuild takes a lock on this machine shared by every test process
// that builds the command, and returns its release. go test runs two
// packages' test binaries at once, and two of them building the command
// together with a cold build cache compile every package of it twice (the
// race detector's builds of the tests share none of it); one after the
// other, the second build is a link from the first one's cache. Without
// the lock file (a read-only temporary folder) the builds go on unlocked.
func lockBuild() (unlock func()) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "remessa-runtest-build.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing the file releases the lock
}

// Exec runs the remessa command with args, env added to the environment,
// and returns its exit code (-N when a signal N ended it) and its output.
func Exec(t testing.TB, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return -int(st.Signal()), string(out)
		}
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return 0, string(out)
}

// CobvOfBatches lists, through cl, the cobv of every batch the rows name
// (pages of 1000, created within a day of now) and counts each txid: a
// crash test wants every count to be 1 and one txid per row.
func CobvOfBatches(tb testing.TB, cl *api.Client, rows []results.Row) map[string]int {
	tb.Helper()
	count := map[string]int{}
	batches := map[string]bool{}
	for _, r := range rows {
		batches[r.BatchID] = true
	}
	for b := range batches {
		id, err := strconv.ParseInt(b, 10, 64)
		if err != nil {
			tb.Fatalf("batch id %q of the results is not a number", b)
		}
		for page := 0; ; page++ {
			p := api.ListCobVParams{LoteCobVID: id}
			p.Inicio, p.Fim = time.Now().Add(-24*time.Hour), time.Now().Add(24*time.Hour)
			p.PaginaAtual, p.ItensPorPagina = page, 1000
			pg, err := cl.ListCobV(context.Background(), p)
			if err != nil {
				tb.Fatalf("list the cobv of batch %d: %v", id, err)
			}
			for _, c := range pg.Cobs {
				count[c.Txid]++
			}
			if page+1 >= pg.Parametros.Paginacao.QuantidadeDePaginas {
				break
			}
		}
	}
	return count
}

// Listed is one charge as GET /v1/charges lists it.
type Listed struct {
	ID       int64   `json:"id"`
	Total    int64   `json:"total"`
	CustomID *string `json:"custom_id"`
	Customer *struct {
		CPF string `json:"cpf"`
	} `json:"customer"`
	Payment *struct {
		Carnet *struct {
			CarnetID int64  `json:"carnet_id"`
			Parcel   int    `json:"parcel"`
			ExpireAt string `json:"expire_at"`
		} `json:"carnet"`
		BankingBillet *struct {
			ExpireAt string `json:"expire_at"`
		} `json:"banking_billet"`
	} `json:"payment"`
}

// ListCharges lists through c every charge of a type created in the last
// two days, a page of 1000 at a time.
func ListCharges(t testing.TB, c *api.Client, chargeType string) []Listed {
	t.Helper()
	var all []Listed
	for page := 1; ; page++ {
		q := url.Values{"charge_type": {chargeType}, "begin_date": {time.Now().AddDate(0, 0, -2).Format("2006-01-02")},
			"end_date": {time.Now().AddDate(0, 0, 2).Format("2006-01-02")}, "limit": {"1000"}, "page": {strconv.Itoa(page)}}
		resp, err := c.Do(context.Background(), api.V1, http.MethodGet, "/v1/charges?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Data []Listed `json:"data"`
		}
		if err := json.Unmarshal(resp.Body, &env); err != nil {
			t.Fatal(err)
		}
		all = append(all, env.Data...)
		if len(env.Data) < 1000 {
			return all
		}
	}
}

// CopyRun copies a run folder (its journal, results and reports) into a
// new temporary folder of the same name, without its ledger (situacao.db
// and its WAL files), and returns it: two ledgers of one run can then be
// kept side by side (a sync by polling beside a listener's, an
// incremental sync beside a full one).
func CopyRun(t testing.TB, dir string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(dir))
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(filepath.Base(p), status.FileName) {
			return nil
		}
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, fi.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// Ledger reads every charge of the ledger of the run in dir, in row and
// parcel order.
func Ledger(t testing.TB, dir string) []status.Charge {
	t.Helper()
	l, err := status.OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cs, err := l.Charges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
