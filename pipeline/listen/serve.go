package listen

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"
)

// DefaultAddr is where `remessa listen` listens by default.
const DefaultAddr = "127.0.0.1:8090"

// Serve is `remessa listen`: it opens the inbox of opts.RunsDir, listens
// on addr, calls ready with the base URL it answers on, applies the inbox
// as deliveries come, and stops cleanly when ctx is done (the deliveries
// under way are answered, the item being applied is finished or left
// pending). It connects to the runs' services at once (an embedded runs
// folder's sandbox starts, and its outbox posts what it kept) and logs
// the addresses through opts.Logf. It returns the inbox's counts at the
// end.
func Serve(ctx context.Context, opts Options, addr string, ready func(baseURL string)) (Stats, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	l, err := Open(ctx, opts)
	if err != nil {
		return Stats{}, err
	}
	defer l.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return Stats{}, err
	}
	srv := &http.Server{Handler: l.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready("http://" + ln.Addr().String())
	}
	wctx, stopWork := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		svcs, err := l.Connect(wctx)
		keys := make([]string, 0, len(svcs))
		for k := range svcs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			l.logf("listen: serviço %s em %s", k, svcs[k])
		}
		if err != nil && wctx.Err() == nil {
			l.logf("listen: %v (os tokens serão lidos quando o serviço responder; use --base-url para um remessa sandbox servindo os dados)", err)
		}
		notes := l.ClockNotes(wctx)
		for _, k := range keys {
			if n := notes[k]; n != "" {
				l.logf("listen: serviço %s: %s", k, n)
			}
		}
		l.Work(wctx)
	}()
	var serr error
	select {
	case <-ctx.Done():
	case serr = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	srv.Shutdown(sctx)
	cancel()
	stopWork()
	wg.Wait()
	if errors.Is(serr, http.ErrServerClosed) {
		serr = nil
	}
	st, err := l.Stats(context.Background())
	if serr != nil {
		return st, serr
	}
	return st, err
}
