package httpx

import (
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
)

// StatusWriter records the status and size of a response. It supports
// http.ResponseController through Unwrap (Hijack, Flush).
type StatusWriter struct {
	http.ResponseWriter
	Status  int
	Bytes   int64
	written bool
}

// WriteHeader records the status.
func (s *StatusWriter) WriteHeader(code int) {
	if !s.written {
		s.Status = code
		s.written = true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *StatusWriter) Write(b []byte) (int, error) {
	if !s.written {
		s.Status = http.StatusOK
		s.written = true
	}
	n, err := s.ResponseWriter.Write(b)
	s.Bytes += int64(n)
	return n, err
}

// Written reports whether the header was sent.
func (s *StatusWriter) Written() bool { return s.written }

// Unwrap returns the wrapped writer (for http.ResponseController).
func (s *StatusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Recover turns a panic in h into a 500 without internals (in the path's
// dialect) and logs the panic with its stack. http.ErrAbortHandler is
// re-raised so the server aborts the connection as intended.
func Recover(log zerolog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw, ok := w.(*StatusWriter)
		if !ok {
			sw = &StatusWriter{ResponseWriter: w}
		}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.Error().Str("method", r.Method).Str("path", r.URL.Path).
				Interface("panic", v).Bytes("stack", debug.Stack()).Msg("panic in handler")
			if sw.Written() {
				panic(http.ErrAbortHandler) // too late for a clean answer: cut the connection
			}
			InternalError(sw, r)
		}()
		h.ServeHTTP(sw, r)
	})
}

// AccessLog logs one line per request: method, path, status, bytes,
// duration. It never logs headers (Authorization) or bodies.
func AccessLog(log zerolog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &StatusWriter{ResponseWriter: w}
		defer func() {
			lvl := zerolog.InfoLevel
			if sw.Status >= 500 {
				lvl = zerolog.WarnLevel
			}
			status := sw.Status
			if !sw.Written() {
				status = 0 // dropped connection
			}
			log.WithLevel(lvl).Str("method", r.Method).Str("path", r.URL.Path).Int("status", status).
				Int64("bytes", sw.Bytes).Dur("duration_ms", time.Since(start)).Msg("request")
		}()
		h.ServeHTTP(sw, r)
	})
}

// IsLoopback reports whether the request comes from a loopback address.
func IsLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
