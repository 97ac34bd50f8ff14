package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/run/runtest"
)

// TestBackupDuringRunRestores is §2's test: a 3,000-row cobv run is
// started on a real `remessa web` whose embedded sandbox answers slowly;
// while its batches are in flight the administrator downloads the backup
// from the admin page (POST /admin/backup: refused without the CSRF
// token; TestAdminRoutesNeedAdmin refuses it to every other role); the desk is then killed, the archive is
// restored with `remessa restore` into a new folder (a second restore
// into it is refused: not empty), and `remessa web` is started there.
// The restored run finishes by its journal, and the restored sandbox
// holds exactly one cobv per row.
func TestBackupDuringRunRestores(t *testing.T) {
	t.Parallel()
	const rows = 3000
	start := time.Now()
	bin := crashBuildRemessa(t)
	data := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "senha-admin")
	if err := os.WriteFile(pwFile, []byte(testAdminPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sheet, cents := crashCobvSheet(rows)
	p := crashStartWeb(t, bin, data, pwFile)
	var sbURL string
	select {
	case sbURL = <-p.sandboxURL:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("no \"serviço embutido iniciado\" log line; stderr:\n%s", p.log())
	}
	crashSetFaults(t, sbURL, `{"all":{},"routes":{"PUT /v2/lotecobv/:id":{"latency":"500ms","jitter":"1s"},"GET /v2/cobv":{"latency":"2s","jitter":"2s"}}}`)
	c := crashLogin(t, p.url)
	runPath := crashStartCobvRun(t, c, sheet, rows)
	ev := crashWatchProgress(t, c, runPath+"/eventos", func(ev RunEvent) bool {
		return ev.Finished || ev.Progress.Batches > 0 || ev.Progress.Done > 0
	})
	if ev.Finished || ev.Progress.Done >= rows {
		t.Fatalf("the run got to the end before the backup: %+v", ev)
	}
	time.Sleep(1200 * time.Millisecond)

	// The admin page offers the download; the POST needs the token.
	if r := c.get("/admin/backup"); r.Status != http.StatusOK || !strings.Contains(r.Body, `action="/admin/backup"`) {
		t.Fatalf("backup page: %d %s", r.Status, crashSnippet(r.Body))
	}
	if r := c.postForm("/admin/backup", url.Values{"csrf": {"nao-e-o-token"}}); r.Status != http.StatusForbidden {
		t.Fatalf("backup without the CSRF token: %d", r.Status)
	}
	r := c.postForm("/admin/backup", nil)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/gzip" ||
		!strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="remessa-backup-`) || !strings.HasPrefix(r.Body, "\x1f\x8b") {
		t.Fatalf("backup download: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Content-Disposition"))
	}
	if pg := c.get(runPath); strings.Contains(pg.Body, `class="badge done" data-k="status"`) {
		t.Fatal("the run finished before the backup was taken: the test proves nothing")
	}
	archive := filepath.Join(t.TempDir(), "backup.tar.gz")
	if err := os.WriteFile(archive, []byte(r.Body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("backup of %d bytes taken after %s", len(r.Body), time.Since(start).Round(time.Millisecond))
	p.kill9(t)

	restored := filepath.Join(t.TempDir(), "restaurada")
	if code, out := runtest.Exec(t, nil, "restore", archive, "--data", restored); code != 0 || !strings.Contains(out, "restaurado em") {
		t.Fatalf("remessa restore: %d %s", code, out)
	}
	if code, out := runtest.Exec(t, nil, "restore", archive, "--data", restored); code != 2 || !strings.Contains(out, "não está vazia") {
		t.Fatalf("a second restore into the same folder: %d %s", code, out)
	}
	p = crashStartWeb(t, bin, restored, pwFile)
	c = crashLogin(t, p.url)
	crashWaitDone(t, c, p, runPath)
	t.Logf("restored run done after %s", time.Since(start).Round(time.Millisecond))
	p.stop(t)
	crashCheckCobvOnce(t, restored, rows, cents, start)
}
