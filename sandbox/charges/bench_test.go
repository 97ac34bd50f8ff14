package charges

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"remessa/api"
)

// Benchmarks through HTTP on loopback with a file-backed store (SQLite in
// b.TempDir()), 2 client goroutines per GOMAXPROCS. The client side is a
// plain keep-alive net/http client with a token fetched once, so the
// figures measure the server:
//
//	go test ./sandbox/charges -run XXX -bench . -benchtime 3s
//
// BenchmarkCarnetCreate12API does the same through api.Client.

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds the throughput and the CPU spent per operation (client and
// server together, as both run in this process); 2 s / cpu-µs/op is the
// rate 2 idle cores would sustain, whatever else runs on the machine.
func report(b *testing.B, cpu0 time.Duration, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
	per := float64(cpuTime()-cpu0) / float64(time.Microsecond) / float64(b.N)
	b.ReportMetric(per, "cpu-µs/op")
	b.ReportMetric(2e6/per, "2core-"+unit)
}

func benchToken(b testing.TB, e *env) string {
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/authorize", bytes.NewReader([]byte(`{"grant_type":"client_credentials"}`)))
	req.SetBasicAuth(testClientID, testSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		b.Fatalf("token: %v", err)
	}
	return tok.AccessToken
}

func benchClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr}
}

func benchDo(b *testing.B, hc *http.Client, method, url, tok string, body []byte) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Errorf("%s %s: status %d", method, url, resp.StatusCode)
	}
}

func BenchmarkCarnetCreate12(b *testing.B) {
	e := newEnv(b, filepath.Join(b.TempDir(), "sandbox.db"))
	tok := benchToken(b, e)
	body, _ := json.Marshal(newCarnetReq("2026-04-01", 12, 10000))
	hc := benchClient()
	b.SetParallelism(2)
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchDo(b, hc, "POST", e.srv.URL+"/v1/carnet", tok, body)
		}
	})
	report(b, cpu0, "carnets/s")
}

func BenchmarkCarnetCreate12API(b *testing.B) {
	e := newEnv(b, filepath.Join(b.TempDir(), "sandbox.db"))
	req := newCarnetReq("2026-04-01", 12, 10000)
	b.SetParallelism(2)
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := e.c.CreateCarnet(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, cpu0, "carnets/s")
}

func BenchmarkGetCharge(b *testing.B) {
	e := newEnv(b, filepath.Join(b.TempDir(), "sandbox.db"))
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(5000), Payment: api.Payment{BankingBillet: billet("2026-03-20")}})
	if err != nil {
		b.Fatal(err)
	}
	tok := benchToken(b, e)
	url := e.srv.URL + "/v1/charge/" + strconv.FormatInt(res.ChargeID, 10)
	hc := benchClient()
	b.SetParallelism(2)
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			benchDo(b, hc, "GET", url, tok, nil)
		}
	})
	report(b, cpu0, "gets/s")
}
