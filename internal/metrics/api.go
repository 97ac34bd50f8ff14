package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// APIRoute is one route pattern of the service ("POST /v1/charge/:id/pay")
// with its metric children resolved once, so counting a call costs two
// atomic additions and a histogram observation, with no allocation.
type APIRoute struct {
	api, pattern string
	duration     prometheus.Observer
	throttled    prometheus.Counter
	retries      [4]prometheus.Counter // retryReasons
	status       [600]atomic.Pointer[prometheus.Counter]
	other        prometheus.Counter // no answer, or a status out of 100–599
}

var retryReasons = [...]string{"429", "5xx", "rede", "401"}

// Retry reasons for APIRoute.Retry.
const (
	Retry429 = iota
	Retry5xx
	RetryNetwork
	Retry401
)

// routes holds the APIRoutes by the hash of (api, method, pattern): an
// immutable map replaced on the first call of a new route, so a look-up
// takes no lock.
var (
	routesMu sync.Mutex
	routes   atomic.Pointer[map[uint64]*APIRoute]
)

// RouteOf is the APIRoute of a call: api ("v1", "pix"), method and the
// path as sent ("/v1/charge/123/pay?x=1"). The pattern replaces each
// segment that carries data (digits, a txid, a Pix key, a token: anything
// that is not a lowercase word of the API) by ":id" and drops the query,
// so no id, CPF, key or token reaches a label. It does not allocate once
// the route has been seen.
func RouteOf(api, method, path string) *APIRoute {
	h := fnvString(fnvOffset, api)
	h = fnvString(h^'|', method)
	forEachSegment(path, func(seg string, variable bool) {
		if variable {
			h = fnvString(h^'/', ":id")
		} else {
			h = fnvString(h^'/', seg)
		}
	})
	if m := routes.Load(); m != nil {
		if r, ok := (*m)[h]; ok {
			return r
		}
	}
	return newRoute(h, api, method, path)
}

func newRoute(h uint64, api, method, path string) *APIRoute {
	routesMu.Lock()
	defer routesMu.Unlock()
	old := routes.Load()
	if old != nil {
		if r, ok := (*old)[h]; ok {
			return r
		}
	}
	pattern := method + " "
	forEachSegment(path, func(seg string, variable bool) {
		if variable {
			seg = ":id"
		}
		pattern += "/" + seg
	})
	r := &APIRoute{api: api, pattern: pattern}
	r.duration = apiDuration.WithLabelValues(api, pattern)
	r.throttled = apiThrottled.WithLabelValues(api, pattern)
	for i, reason := range retryReasons {
		r.retries[i] = apiRetries.WithLabelValues(api, pattern, reason)
	}
	r.other = apiCalls.WithLabelValues(api, pattern, "erro")
	m := make(map[uint64]*APIRoute, 1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[h] = r
	routes.Store(&m)
	return r
}

// Pattern is the route's pattern, as its labels carry it.
func (r *APIRoute) Pattern() string { return r.pattern }

// Observe counts one attempt that ended with status (0: no answer) after d.
func (r *APIRoute) Observe(status int, d time.Duration) {
	r.duration.Observe(d.Seconds())
	if status < 100 || status >= 600 {
		r.other.Inc()
		return
	}
	c := r.status[status].Load()
	if c == nil {
		c = r.resolve(status)
	}
	(*c).Inc()
	if status == 429 {
		r.throttled.Inc()
	}
}

func (r *APIRoute) resolve(status int) *prometheus.Counter {
	c := apiCalls.WithLabelValues(r.api, r.pattern, strconv.Itoa(status))
	r.status[status].CompareAndSwap(nil, &c)
	return r.status[status].Load()
}

// Retry counts an attempt sent again, for reason (Retry429, Retry5xx,
// RetryNetwork, Retry401).
func (r *APIRoute) Retry(reason int) {
	if reason >= 0 && reason < len(r.retries) {
		r.retries[reason].Inc()
	}
}

// forEachSegment calls f with each segment of path (query dropped) and
// whether it carries data rather than naming a resource.
func forEachSegment(path string, f func(seg string, variable bool)) {
	for i := 0; i < len(path); i++ {
		if path[i] == '?' || path[i] == '#' {
			path = path[:i]
			break
		}
	}
	for len(path) > 0 {
		if path[0] == '/' {
			path = path[1:]
			continue
		}
		end := len(path)
		for i := 0; i < len(path); i++ {
			if path[i] == '/' {
				end = i
				break
			}
		}
		seg := path[:end]
		path = path[end:]
		f(seg, variableSegment(seg))
	}
}

// variableSegment reports whether a path segment carries data: anything
// but a short word of lowercase letters and "-" ("charge", "one-step",
// "lotecobv", "v1", "v2", "gn", "evp"). An id, a txid, a token, an escaped
// Pix key all have a digit, an upper-case letter, "%", "@" or length.
func variableSegment(seg string) bool {
	if len(seg) == 0 || len(seg) > 24 {
		return true
	}
	if seg == "v1" || seg == "v2" {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !(c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return true
		}
	}
	return false
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}
