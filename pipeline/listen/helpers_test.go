package listen_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/pipeline/listen"
	"remessa/pipeline/run"
	"remessa/pipeline/run/runtest"
	"remessa/pipeline/status"
	"remessa/sandbox"
	"remessa/sandbox/control"
)

func noEnv(string) (string, bool) { return "", false }

// server is a listener's Handler served on loopback.
type server struct {
	L   *listen.Listener
	URL string
	srv *http.Server
}

// serve opens a listener on runsDir and serves it on addr ("" = any
// port); no worker runs unless the test drains it.
func serve(t *testing.T, addr string, o listen.Options) *server {
	t.Helper()
	l, err := listen.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	for i := 0; ; i++ {
		ln, err = net.Listen("tcp", addr)
		if err == nil || i == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond) // the port of a listener just closed
	}
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	s := &server{L: l, URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: l.Handler()}}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s
}

// Close stops serving and closes the listener (what a kill leaves: the
// inbox as committed).
func (s *server) Close() {
	if s.srv == nil {
		return
	}
	s.srv.Close()
	s.L.Close()
	s.srv = nil
}

func (s *server) addr() string { return strings.TrimPrefix(s.URL, "http://") }

// post sends a delivery and wants 200.
func post(t *testing.T, u, ct, body string) {
	t.Helper()
	resp, err := http.Post(u, ct, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", u, resp.StatusCode, b)
	}
}

func postToken(t *testing.T, u, token string) {
	t.Helper()
	post(t, u, "application/x-www-form-urlencoded", url.Values{"notification": {token}}.Encode())
}

// copyJob copies a sample's files into a new folder and returns it.
func copyJob(t *testing.T, sample string, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("../../samples", sample, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startSandbox starts a shared embedded sandbox for the test.
func startSandbox(t *testing.T) (*sandbox.Running, *control.Client) {
	t.Helper()
	rn, err := run.StartEmbedded(filepath.Join(t.TempDir(), "sb"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	return rn, &control.Client{BaseURL: rn.URL}
}

// waitOutbox waits until the sandbox delivered everything it queued.
func waitOutbox(t *testing.T, ctl *control.Client) {
	t.Helper()
	ctx := context.Background()
	deadline := waitLimit(t)
	for {
		l, err := ctl.Outbox(ctx, "pending")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outbox still has %d deliveries: %+v", len(l.Pending), l.Pending[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLimit is how long a test waits for something that happens without
// it (the outbox's deliveries, the worker's pass): the test's own
// deadline, less a minute to report, never a fixed limit that a loaded
// machine overruns.
func waitLimit(t *testing.T) time.Time {
	if d, ok := t.Deadline(); ok {
		return d.Add(-time.Minute)
	}
	return time.Now().Add(10 * time.Minute)
}

// copyRun copies a run folder without its ledger, for a sync by polling
// beside the listener's ledger.
func copyRun(t *testing.T, dir string) string { return runtest.CopyRun(t, dir) }

// ledgerOf reads a run folder's ledger.
func ledgerOf(t *testing.T, dir string) []status.Charge { return runtest.Ledger(t, dir) }

// sameLedger compares what two ledgers say of each charge: status, state,
// paid value and date, method, refund.
func sameLedger(t *testing.T, got, want []status.Charge) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d charges in the listener's ledger, %d in the polled one", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Key != w.Key || g.Status != w.Status || g.State != w.State || g.PaidCents != w.PaidCents || g.PaidAt != w.PaidAt ||
			g.Method != w.Method || g.RefundCents != w.RefundCents {
			t.Errorf("charge %s: listener %s/%s paid %d at %q by %q refund %d; polling %s/%s paid %d at %q by %q refund %d",
				g.Key, g.Status, g.State, g.PaidCents, g.PaidAt, g.Method, g.RefundCents,
				w.Status, w.State, w.PaidCents, w.PaidAt, w.Method, w.RefundCents)
		}
	}
}

// withLine adds line after the first line of the job containing after.
func withLine(t *testing.T, job, after, line string) {
	t.Helper()
	b, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(after))
	if i < 0 {
		t.Fatalf("%s: no %q", job, after)
	}
	j := i + bytes.IndexByte(b[i:], '\n') + 1
	out := append(append(append([]byte{}, b[:j]...), []byte(line+"\n")...), b[j:]...)
	if err := os.WriteFile(job, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
