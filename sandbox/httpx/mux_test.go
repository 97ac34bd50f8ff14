package httpx

import (
	"net/http/httptest"
	"testing"
)

func TestTrimTrailingSlash(t *testing.T) {
	for _, c := range []struct{ target, path, raw string }{
		{"/", "/", ""},
		{"/v2/cobv", "/v2/cobv", ""},
		{"/v2/cobv/", "/v2/cobv", ""},
		{"/v2/cobv/?inicio=x", "/v2/cobv", ""},
		{"/v2/cobv//", "/v2/cobv/", ""},                            // one slash only
		{"/v2/webhook/a%2F", "/v2/webhook/a/", "/v2/webhook/a%2F"}, // an escaped slash is a value's
		{"/v2/webhook/a%2F/", "/v2/webhook/a/", "/v2/webhook/a%2F"},
	} {
		r := httptest.NewRequest("GET", c.target, nil)
		r2 := TrimTrailingSlash(r)
		if r2.URL.Path != c.path || r2.URL.RawPath != c.raw {
			t.Errorf("%s: path %q raw %q, want %q %q", c.target, r2.URL.Path, r2.URL.RawPath, c.path, c.raw)
		}
		if r2 != r && r.URL.Path == r2.URL.Path {
			t.Errorf("%s: copied without a change", c.target)
		}
		if r2.URL.RawQuery != r.URL.RawQuery {
			t.Errorf("%s: query lost", c.target)
		}
	}
}
