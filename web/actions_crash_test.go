package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"remessa/api"
	"remessa/pipeline/run"
)

// TestDeskActionSurvivesKill9: a secretary confirms the cancellation of
// five students' carnets on a `remessa web` process that is killed
// (SIGKILL) right after its third cancellation went out, before the
// answer was journaled; started again on the same data folder, the action
// ends by itself without anyone pressing a button: the third carnet, whose
// outcome was unknown, is looked up and not cancelled again, the other two
// are cancelled, and the service holds exactly one cancellation of each
// carnet.
func TestDeskActionSurvivesKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a desk process killed; skipped with -short")
	}
	ctx := context.Background()
	bin := crashBuildRemessa(t)
	data := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "senha-admin")
	if err := os.WriteFile(pwFile, []byte(testAdminPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := crashStartWebWith(t, bin, data, pwFile, []string{"REMESSA_CRASH_AT=acao-sent:3"})
	// the first process's sandbox address is not needed: the restarted
	// desk's (below) is the one the checks ask
	select {
	case <-p.sandboxURL:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("no \"serviço embutido iniciado\" log line; stderr:\n%s", p.log())
	}
	c := crashLogin(t, p.url)
	c.http.Timeout = 3 * time.Minute
	runPath := startEscolaRun(t, c, "2027-03-10")
	crashWaitDone(t, c, p, runPath)
	res := crashResults(t, filepath.Join(data, "execucoes"))
	var keys []string
	for _, row := range res.Rows[:5] {
		keys = append(keys, row.Key)
	}

	// plan and confirm: the process dies in the middle of the job
	r := c.postForm(runPath+"/acoes", url.Values{"chave": keys, "acao": {"cancel"}})
	m := regexp.MustCompile(`^/acoes/(\d+)$`).FindStringSubmatch(r.URL.Path)
	if r.Status != http.StatusOK || m == nil || count(r.Body, "charges") != "60" {
		t.Fatalf("plan: %d at %s, %s charges", r.Status, r.URL.Path, count(r.Body, "charges"))
	}
	actPath := r.URL.Path
	c.postForm(actPath+"/confirmar", nil)
	select {
	case <-p.done:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("the desk was not killed in the action; stderr:\n%s", p.log())
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the desk ended %v, want killed by SIGKILL; stderr:\n%s", p.cmd.ProcessState, p.log())
	}

	// started again: the action ends by itself
	p = crashStartWeb(t, bin, data, pwFile)
	var sbURL string
	select {
	case u := <-p.sandboxURL:
		sbURL = u
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("no \"serviço embutido iniciado\" log line; stderr:\n%s", p.log())
	}
	c = crashLogin(t, p.url)
	deadline := testDeadline(t)
	for {
		r = c.get(actPath)
		if strings.Contains(r.Body, `class="badge done" id="situacao-acao"`) {
			break
		}
		if mm := regexp.MustCompile(`class="badge (problems|failed)" id="situacao-acao"`).FindStringSubmatch(r.Body); mm != nil {
			t.Fatalf("the action ended %s after the restart: %s\nstderr:\n%s", mm[1], snippet(r.Body, "itens"), p.log())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the action did not end after the restart: %s\nstderr:\n%s", snippet(r.Body, "situacao-acao"), p.log())
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !strings.Contains(p.log(), "ação retomada após parada do servidor") {
		t.Errorf("the restart did not log the action's recovery; stderr:\n%s", p.log())
	}
	for _, k := range keys {
		if !regexp.MustCompile(`data-key="` + regexp.QuoteMeta(k) + `">(?s:.*?)class="badge done"`).MatchString(r.Body) {
			t.Errorf("student %s is not done on the action's page", k)
		}
	}

	// the service: each carnet cancelled, once
	cl, err := api.New(api.Config{BaseURL: sbURL, PixBaseURL: sbURL, ClientID: run.EmbeddedClientID, ClientSecret: run.EmbeddedClientSecret})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows[:5] {
		cn, err := cl.GetCarnet(ctx, row.CarnetID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range cn.History {
			if h.Message == "Carnê cancelado" {
				n++
			}
		}
		if cn.Status != "canceled" || n != 1 {
			t.Errorf("carnet %d of %s: %s, cancelled %d times, want canceled once", row.CarnetID, row.Key, cn.Status, n)
		}
		for k, pc := range cn.Charges {
			if pc.Status != "canceled" {
				t.Errorf("carnet %d parcel %d: %s, want canceled", row.CarnetID, k+1, pc.Status)
			}
		}
	}
	// a sixth student's carnet is untouched
	if cn, err := cl.GetCarnet(ctx, res.Rows[5].CarnetID); err != nil || cn.Status == "canceled" {
		t.Errorf("carnet of %s, not selected: %v %v", res.Rows[5].Key, err, cn)
	}
	p.stop(t)
}
