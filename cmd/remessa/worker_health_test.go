package main

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"remessa/internal/pgtest"
	"remessa/pipeline/run"
)

// TestWorkerHealth: a worker given --health-addr answers /healthz,
// /readyz (PostgreSQL and River's tables answer) and /metrics on it while it
// works, and stops serving when it stops.
func TestWorkerHealth(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run.Work(ctx, run.WorkerOptions{DB: dsn, HealthAddr: "127.0.0.1:0", Listening: func(a string) { addrs <- a }})
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("worker ended: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not listen")
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get("/healthz"); st != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", st, body)
	}
	if st, body := get("/readyz"); st != 200 || body != "banco: ok\nfila: ok\n" {
		t.Errorf("readyz: %d %q", st, body)
	}
	if st, _ := get("/metrics"); st != 200 {
		t.Errorf("metrics: %d", st)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("worker: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not stop")
	}
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			break
		}
		resp.Body.Close()
		if i == 20 {
			t.Error("the health server still answers after the worker stopped")
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}
