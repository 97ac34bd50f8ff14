package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"remessa/internal/pgtest"
	"remessa/pipeline/run/runtest"
)

// TestWebClusterHandoffCrash kills `remessa web --db` in the handoff's
// crash windows (cluster.go): after the intent is in web.db and before
// anything is in PostgreSQL ("handoff"), and after the cluster run is
// created and its units enqueued but before web.db records it
// ("handoff-pg"); and, the handoff done, in the middle of a unit its own
// worker took: between a batch PUT's answer and its journal entry
// ("lote-sent", the run's crash point REMESSA_CRASH_AT). Started again on
// the same data, the server finishes the handoff and the run by itself:
// exactly one cluster run in the database, every row issued exactly once.
func TestWebClusterHandoffCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and kills processes; skipped with -short")
	}
	crashEnv := map[string]string{"handoff": "REMESSA_WEB_CRASH_AT=handoff", "handoff-pg": "REMESSA_WEB_CRASH_AT=handoff-pg",
		"lote-sent": "REMESSA_CRASH_AT=lote-sent:1"}
	for _, point := range []string{"handoff", "handoff-pg", "lote-sent"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel() // a database, a sandbox and a desk process of its own
			const rows, batch = 300, 100
			start := time.Now()
			dsn := pgtest.DSN(t)
			bin := runtest.Binary(t)
			rn, cl := clusterSandbox(t)
			data := t.TempDir()
			pwFile := filepath.Join(t.TempDir(), "senha-admin")
			if err := os.WriteFile(pwFile, []byte(testAdminPassword+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			flags := []string{"--db", dsn, "--unit-timeout", "5s"}
			p := crashStartWebWith(t, bin, data, pwFile, []string{crashEnv[point]}, flags...)
			c := crashLogin(t, p.url)
			acc := clusterAccount(t, c, rn)
			sheet, job := clusterCobv("K", rows, batch, rn.PixKey)
			r := c.postMultipart("/remessas", url.Values{"kind": {"cobv"}, "account": {acc}},
				upload{Field: "planilha", Name: "pagadores.csv", Data: sheet}, upload{Field: "job", Name: "job.yaml", Data: job})
			if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
				t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
			}
			base := strings.TrimSuffix(r.URL.Path, "/validacao")
			// the confirm answers with the run's address; the process dies
			// right after (or before the answer is out: the run's driver
			// may start as soon as the transaction commits), so the
			// redirect is not followed
			hc := *c.http
			hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			runPath := "/execucoes/1" // the data folder's first run
			resp, err := hc.PostForm(p.url+base+"/executar", url.Values{"csrf": {c.csrf}, "confirmacao": {strconv.Itoa(rows)}})
			if err == nil {
				resp.Body.Close()
				if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != runPath {
					t.Fatalf("confirm: %d to %q, want %s", resp.StatusCode, loc, runPath)
				}
			} else {
				t.Logf("the confirm's answer was lost with the process: %v", err)
			}
			select {
			case <-p.done:
			case <-time.After(time.Until(testDeadline(t))):
				t.Fatalf("the web did not kill itself at %s; stderr:\n%s", point, p.log())
			}
			if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the web ended %v, want killed at %s; stderr:\n%s", p.cmd.ProcessState, point, p.log())
			}
			// the crash window: nothing in PostgreSQL yet, or the run
			// there without web.db knowing it was handed over
			ids := clusterRuns(t, dsn)
			if want := map[string]int{"handoff": 0, "handoff-pg": 1, "lote-sent": 1}[point]; len(ids) != want {
				t.Fatalf("runs in the database after the kill at %s: %v, want %d", point, ids, want)
			}
			t.Logf("killed at %s after %s", point, time.Since(start).Round(time.Millisecond))

			p = crashStartWebWith(t, bin, data, pwFile, nil, flags...)
			c = crashLogin(t, p.url)
			deadline := testDeadline(t)
			for {
				r = c.get(runPath)
				if strings.Contains(r.Body, `class="badge done" data-k="status"`) {
					break
				}
				if m := regexp.MustCompile(`class="badge (failed|problems|cancelled)" data-k="status"`).FindStringSubmatch(r.Body); m != nil {
					t.Fatalf("run ended %s after the restart: %s\nstderr:\n%s", m[1], crashSnippet(r.Body), p.log())
				}
				if time.Now().After(deadline) {
					t.Fatalf("run not done at the test's deadline after the restart: %s\nstderr:\n%s", crashSnippet(r.Body), p.log())
				}
				time.Sleep(250 * time.Millisecond)
			}
			t.Logf("done %s after the start", time.Since(start).Round(time.Millisecond))
			if !strings.Contains(p.log(), "execução retomada após parada do servidor") {
				t.Errorf("the restart did not log the run's recovery; stderr:\n%s", p.log())
			}
			if !strings.Contains(r.Body, `data-k="units">3/3<`) {
				t.Errorf("run page lacks the units 3/3: %s", crashSnippet(r.Body))
			}
			p.stop(t)
			if ids := clusterRuns(t, dsn); len(ids) != 1 {
				t.Fatalf("runs in the database: %v, want exactly 1", ids)
			}
			checkOnce(t, cl, crashResults(t, filepath.Join(data, "execucoes")), rows)
		})
	}
}
