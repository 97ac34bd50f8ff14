package httpx

import (
	"net/http"
	"strings"
)

// Mux is where the sandbox's parts register their routes (Go 1.22
// patterns such as "PUT /v2/cobv/{txid}"): an *http.ServeMux, or the
// sandbox's router, which also remembers every pattern so that tests can
// walk the whole route table.
type Mux interface {
	Handle(pattern string, handler http.Handler)
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// TrimTrailingSlash returns r with one trailing slash removed from its
// path ("/v2/cobv/" → "/v2/cobv"), or r itself when the path is "/" or
// does not end in a slash. Real clients (the official Node SDK lists
// due-date charges with GET /v2/cobv/) send it and the real service
// accepts it; answering with a redirect would not do, since clients do not
// follow redirects on PUT and POST. An escaped slash ("%2F") at the end is
// part of a path value, not a separator, and is kept.
func TrimTrailingSlash(r *http.Request) *http.Request {
	p := r.URL.Path
	if len(p) < 2 || p[len(p)-1] != '/' {
		return r
	}
	if r.URL.RawPath != "" && !strings.HasSuffix(r.URL.RawPath, "/") {
		return r
	}
	r2 := r.WithContext(r.Context()) // a shallow copy
	u := *r.URL
	u.Path = p[:len(p)-1]
	if u.RawPath != "" {
		u.RawPath = u.RawPath[:len(u.RawPath)-1]
	}
	r2.URL = &u
	return r2
}
