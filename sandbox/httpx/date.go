package httpx

import (
	"net/http"
	"sync/atomic"
	"time"
)

// dateLine is the Date header of one second of the sandbox's clock.
type dateLine struct {
	sec int64
	v   []string
}

// Date sets the Date header of every answer of h from now (the sandbox's
// own clock, which /sandbox/clock/advance moves) instead of the host's, so
// a client that learns the service's time from its answers, as remessa
// does with the real service, sees the sandbox's time. net/http keeps a
// Date the handler set. The header is formatted once per second of that
// clock and shared by the answers of that second (a handler that sets its
// own Date replaces the slice, never writes into it).
func Date(now func() time.Time, h http.Handler) http.Handler {
	var cur atomic.Pointer[dateLine]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := now()
		sec := t.Unix()
		d := cur.Load()
		if d == nil || d.sec != sec {
			d = &dateLine{sec: sec, v: []string{t.UTC().Format(http.TimeFormat)}}
			cur.Store(d)
		}
		w.Header()["Date"] = d.v
		h.ServeHTTP(w, r)
	})
}
