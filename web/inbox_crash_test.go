package web

import (
	"context"
	"database/sql"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"remessa/pipeline/listen"
	"remessa/pipeline/status"
	"remessa/sandbox/control"
)

// TestInboxSurvivesKill9: a real `remessa web` process issues a carnet
// run on the embedded account and stops; started again with a crash point
// in the inbox's apply, it receives the sandbox's notification of a
// payment, keeps it, answers 200, and is killed (SIGKILL) when its River
// job comes to apply it. The notification is in the inbox, the ledger
// untouched; a third start, without any request, applies it and the run
// page shows the payment.
func TestInboxSurvivesKill9(t *testing.T) {
	t.Parallel()
	bin := crashBuildRemessa(t)
	data := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "senha-admin")
	if err := os.WriteFile(pwFile, []byte(testAdminPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// the runs name the desk's address: the same one at every start
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	flags := []string{"--addr", addr, "--sync-every", "0"}

	p := crashStartWebWith(t, bin, data, pwFile, nil, flags...)
	c := crashLogin(t, p.url)
	r := c.postMultipart("/remessas", map[string][]string{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.csv", Data: []byte(followSheet())},
		upload{Field: "job", Name: "job.yaml", Data: []byte(inboxJob)})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, crashSnippet(r.Body))
	}
	r = c.postForm(strings.TrimSuffix(r.URL.Path, "/validacao")+"/executar", nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s", r.Status, r.URL.Path)
	}
	runPath := r.URL.Path
	crashWaitDone(t, c, p, runPath)
	inboxDB := filepath.Join(data, "execucoes", listen.FileName)
	waitInbox(t, inboxDB, func(n inboxN) bool { return n.pending == 0 && n.orphans == 0 }, "the creation notifications applied")
	p.stop(t)

	// killed between the 200 and the apply
	p = crashStartWebWith(t, bin, data, pwFile, []string{"REMESSA_CRASH_AT=listen-aplicar:1"}, flags...)
	var sbURL string
	select {
	case sbURL = <-p.sandboxURL:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("no sandbox URL in the log:\n%s", p.log())
	}
	res := crashResults(t, filepath.Join(data, "execucoes"))
	before := inboxCounts(t, inboxDB)
	if _, err := sandboxControl(t, sbURL).PayParcel(context.Background(), res.Rows[0].CarnetID, 1, control.PayRequest{}, ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Until(testDeadline(t))):
		t.Fatalf("the desk was not killed at its apply; stderr:\n%s", p.log())
	}
	// (the carnet's token was applied before: posted again, it is pending again)
	if n := inboxCounts(t, inboxDB); n.pending < 1 || n.applied > before.applied {
		t.Fatalf("after the kill: %+v (before the payment %+v), want the payment's notification pending and nothing more applied", n, before)
	}
	parcel := res.Rows[0].Parcels[0].ChargeID
	if st := ledgerState(t, filepath.Join(data, "execucoes", res.Run.ID), parcel); st == status.StatePaid {
		t.Fatalf("parcel %d is paid in the ledger before the notification was applied", parcel)
	}

	// started again: the inbox is applied by itself
	p = crashStartWebWith(t, bin, data, pwFile, nil, flags...)
	c = crashLogin(t, p.url)
	deadline := testDeadline(t)
	for {
		body := c.get(runPath).Body
		if strings.Contains(body, received(25000)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run page never showed the payment; stderr:\n%s", p.log())
		}
		time.Sleep(300 * time.Millisecond)
	}
	if n := inboxCounts(t, inboxDB); n.pending != 0 {
		t.Errorf("after the restart: %+v, want nothing pending", n)
	}
	if st := ledgerState(t, filepath.Join(data, "execucoes", res.Run.ID), parcel); st != status.StatePaid {
		t.Errorf("parcel %d is %s in the ledger after the restart, want paid", parcel, st)
	}
	p.stop(t)
}

// ledgerState is the state of charge id in the ledger of the run in dir.
func ledgerState(t *testing.T, dir string, id int64) string {
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
	for _, c := range cs {
		if c.ChargeID == id {
			return c.State
		}
	}
	t.Fatalf("charge %d is not in the ledger of %s", id, dir)
	return ""
}

// inboxN counts the desk's inbox by state.
type inboxN struct{ pending, applied, orphans int }

// inboxCounts reads the desk's inbox (listen.db, read while the desk may
// be running).
func inboxCounts(t *testing.T, path string) inboxN {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n inboxN
	if err := db.QueryRow(`SELECT coalesce(sum(state = ?), 0), coalesce(sum(state = ?), 0), coalesce(sum(state = ?), 0) FROM inbox`,
		listen.StatePending, listen.StateApplied, listen.StateOrphan).Scan(&n.pending, &n.applied, &n.orphans); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitInbox waits until the test's deadline for ok on the inbox's counts.
func waitInbox(t *testing.T, path string, ok func(inboxN) bool, what string) {
	t.Helper()
	deadline := testDeadline(t)
	for {
		n := inboxCounts(t, path)
		if ok(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v at the test's deadline", what, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// BenchmarkNotificationEndpoint: deliveries posted to an account's
// endpoint by 32 concurrent senders (the service posts many at once), each
// acknowledged only once committed to the inbox (listen.db, WAL,
// synchronous FULL); the inbox's River job applies them meanwhile (tokens
// of no run: refused). Reports deliveries/s; the target is 1,000.
func BenchmarkNotificationEndpoint(b *testing.B) {
	srv := startServerCfg(b, Config{SyncEvery: -1, NotifyRate: 1e6})
	u := srv.URL + NotifyPath + notifyToken(b, srv.db, 1)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var seq atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := "notification=bench-" + strconv.FormatInt(seq.Add(1), 10)
			resp, err := cl.Post(u, "application/x-www-form-urlencoded", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	st, err := srv.inbox.Stats(context.Background())
	if err != nil || st.Deliveries != b.N {
		b.Fatalf("the inbox kept %d deliveries of %d acknowledged (%v)", st.Deliveries, b.N, err)
	}
}
