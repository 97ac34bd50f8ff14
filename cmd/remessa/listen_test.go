package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a buffer written by the command while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestListenCommand: listen on a free port prints where, keeps a delivery
// (an orphan: the runs folder has no run) and stops cleanly when told.
func TestListenCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	old := listenContext
	listenContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	defer func() { listenContext = old }()
	runs := t.TempDir()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- dispatch([]string{"listen", "--runs-dir", runs, "--addr", "127.0.0.1:0"}, &out, &errb) }()
	re := regexp.MustCompile(`ouvindo em (http://127\.0\.0\.1:\d+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no address printed: %q %q", out.String(), errb.String())
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	resp, err := http.Post(base+"/notificacao", "application/x-www-form-urlencoded", strings.NewReader(url.Values{"notification": {"abc"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /notificacao: %d", resp.StatusCode)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(errb.String(), "órfão"); {
		if time.Now().After(deadline) {
			t.Fatalf("the delivery was not reported as an orphan: %q", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK || !strings.Contains(out.String(), "parado — 1 entregas") || !strings.Contains(out.String(), "1 órfãs") {
			t.Fatalf("stop: %d %q %q", code, out.String(), errb.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("listen did not stop")
	}
	if code, _, _ := runCLI("listen"); code != exitUsage {
		t.Errorf("listen without --runs-dir: %d", code)
	}
}
