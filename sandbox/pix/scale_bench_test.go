package pix_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/pgtest"
	"remessa/internal/procstat"
	"remessa/sandbox"
)

// The sandbox's share of issue 13's embedded 100,000-row cobv run: a child
// process (this test binary, through TestMain) starts a file-backed
// sandbox, creates n cobv through batches of 1000 (4 at a time, as the
// pipeline does), lists them back by date range (GET /v2/cobv, pages of
// 1000), reads some one by one, and reports its own peak RSS (VmHWM of
// /proc/self/status, read by the child) and sandbox.db's bytes per cobv.
// It measures; it does not assert targets.
//
//	go test -run '^$' -bench SandboxCobvScale -benchtime 1x -timeout 30m ./sandbox/pix/
//
// REMESSA_SANDBOX_SCALE_CPUPROFILE=FILE writes the child's CPU profile.

const scaleChildEnv = "REMESSA_SANDBOX_SCALE_CHILD"
const scaleChildPrefix = "SANDBOX-SCALE-RESULT "

type scaleRes struct {
	Seconds      float64 // creation through lotes until every item is final
	CPUSeconds   float64 // the process's CPU (sandbox and client) during the creation
	ListSeconds  float64 // listing every cobv by date range
	HWMkB        int
	DBBytes      int64 // sandbox.db + -wal after the run
	Listed, Rows int
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(scaleChildEnv); spec != "" {
		os.Exit(scaleChild(spec))
	}
	pgtest.Main(m)
}

// scaleChild runs n cobv ("n dir") and prints its scaleRes.
func scaleChild(spec string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "scale child:", err); return 1 }
	var n int
	var dir string
	if _, err := fmt.Sscan(spec, &n, &dir); err != nil {
		return fail(err)
	}
	if prof := os.Getenv("REMESSA_SANDBOX_SCALE_CPUPROFILE"); prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	srv, err := sandbox.New(sandbox.Config{DataDir: dir, Logger: zerolog.Nop()})
	if err != nil {
		return fail(err)
	}
	rn, err := srv.Start()
	if err != nil {
		return fail(err)
	}
	defer rn.Close()
	c, err := api.New(api.Config{BaseURL: rn.URL, PixBaseURL: rn.PixURL, ClientID: rn.ClientID, ClientSecret: rn.ClientSecret})
	if err != nil {
		return fail(err)
	}
	t0, cpu0 := time.Now(), processCPU()
	lotes := (n + 999) / 1000
	ids := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range ids {
				its := make([]api.LoteCobVItem, 0, 1000)
				for i := l * 1000; i < min(n, (l+1)*1000); i++ {
					r := cobvReq(rn.PixKey, "52998224725", fmt.Sprintf("%d.%02d", 100+i%900, i%100))
					r.Devedor.Nome = fmt.Sprintf("Responsável Número %d da Silva", i)
					r.Valor.Multa = &api.PixModalidade{Modalidade: 2, ValorPerc: "2.00"}
					r.SolicitacaoPagador = "Mensalidade escolar"
					its = append(its, api.LoteCobVItem{Txid: txid("sc", i), CobVRequest: r})
				}
				id := strconv.Itoa(l + 1)
				err := c.PutLoteCobV(ctx, id, api.LoteCobVRequest{Descricao: "escala", Cobsv: its})
				for err == nil {
					var lt *api.LoteCobV
					if lt, err = c.GetLoteCobV(ctx, id); err == nil && lt.Done() {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		}()
	}
	for l := range lotes {
		ids <- l
	}
	close(ids)
	wg.Wait()
	if first != nil {
		return fail(first)
	}
	res := scaleRes{Seconds: time.Since(t0).Seconds(), CPUSeconds: (processCPU() - cpu0).Seconds(), Rows: n}
	t1 := time.Now()
	w := api.ListParams{Inicio: t0.Add(-time.Hour), Fim: time.Now().Add(time.Hour), ItensPorPagina: 1000}
	for p := 0; ; p++ {
		w.PaginaAtual = p
		pg, err := c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}})
		if err != nil {
			return fail(err)
		}
		res.Listed += len(pg.Cobs)
		if len(pg.Cobs) < 1000 {
			break
		}
	}
	for i := 0; i < n; i += 997 {
		if _, err := c.GetCobV(ctx, txid("sc", i)); err != nil {
			return fail(err)
		}
	}
	res.ListSeconds = time.Since(t1).Seconds()
	res.HWMkB, _ = procstat.PeakRSS()
	for _, f := range []string{"sandbox.db", "sandbox.db-wal"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			res.DBBytes += st.Size()
		}
	}
	out, _ := json.Marshal(res)
	fmt.Println(scaleChildPrefix + string(out))
	return 0
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSandboxCobvScale runs the child for 100,000 cobv (other sizes
// with SANDBOX_SCALE_SIZES=25000,400000: whether the cost per cobv grows
// with the cobv already stored). Reported: the creation's time and CPU
// (sandbox and client, one process) per cobv, the listing's time, the
// child's peak RSS and sandbox.db (with its -wal) bytes per cobv.
func BenchmarkSandboxCobvScale(b *testing.B) {
	sizes := []int{100_000}
	if env := os.Getenv("SANDBOX_SCALE_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("cobv=%d", n), func(b *testing.B) {
			var r scaleRes
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), scaleChildEnv+"="+fmt.Sprintf("%d %s", n, b.TempDir()))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v\n%s", err, stderr.String())
				}
				found := false
				sc := bufio.NewScanner(bytes.NewReader(out))
				for sc.Scan() {
					if s, ok := strings.CutPrefix(sc.Text(), scaleChildPrefix); ok {
						found = json.Unmarshal([]byte(s), &r) == nil
					}
				}
				if !found || r.Listed != n {
					b.Fatalf("child result %+v (found %v)\n%s", r, found, out)
				}
			}
			b.ReportMetric(r.Seconds*1e6/float64(n), "µs/cobv")
			b.ReportMetric(r.CPUSeconds*1e6/float64(n), "cpu-µs/cobv")
			b.ReportMetric(r.ListSeconds, "list-s")
			b.ReportMetric(float64(r.HWMkB)/1024, "peak-MB")
			b.ReportMetric(float64(r.DBBytes)/float64(n), "db-B/cobv")
		})
	}
}
