package api

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Retry defaults.
const (
	DefaultMaxRetries   = 4
	DefaultRetryBase    = 100 * time.Millisecond
	DefaultRetryCap     = 5 * time.Second
	DefaultMaxRetryWait = 30 * time.Second
)

// idempotent reports whether a method may be re-sent after a failure that
// may have reached the server.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// retryableStatus reports whether an idempotent request answered status
// may be retried.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// ambiguousStatus reports whether a non-idempotent request answered status
// may have been processed.
func ambiguousStatus(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// backoff returns the wait before retry number attempt (0-based) with full
// jitter: uniform in [0, min(cap, base*2^attempt)].
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.retryCap
	if attempt < 30 {
		if d := c.retryBase << attempt; d > 0 && d < ceil {
			ceil = d
		}
	}
	if ceil <= 0 {
		return 0
	}
	c.rngMu.Lock()
	d := time.Duration(c.rng.Int64N(int64(ceil) + 1))
	c.rngMu.Unlock()
	return d
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(h); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newRNG() *rand.Rand {
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}
