package listen

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkReceive posts charges notifications to a listener on loopback
// from 32 concurrent senders; each is answered 200 only after the inbox
// (listen.db: WAL, synchronous FULL) committed it. "grupo" is the group
// commit the listener uses; "um-a-um" commits each delivery on its own
// (the listener before it), for comparison. Nothing applies the inbox.
func BenchmarkReceive(b *testing.B) {
	for _, bc := range []struct {
		name  string
		group int
	}{{"grupo", 512}, {"um-a-um", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			old := maxGroup
			maxGroup = bc.group
			defer func() { maxGroup = old }()
			l, err := Open(context.Background(), Options{RunsDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: l.Handler()}
			go srv.Serve(ln)
			defer srv.Close()
			u := "http://" + ln.Addr().String() + "/notificacao"
			tr := &http.Transport{MaxIdleConnsPerHost: 64}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			var seq atomic.Int64
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := cl.Post(u, "application/x-www-form-urlencoded", strings.NewReader("notification=t-"+strconv.FormatInt(seq.Add(1), 10)))
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
			st, err := l.Stats(context.Background())
			if err != nil || st.Deliveries != b.N {
				b.Fatalf("kept %d of %d acknowledged (%v)", st.Deliveries, b.N, err)
			}
		})
	}
}
