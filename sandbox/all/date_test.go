package all_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// TestEveryAnswerIsDatedByTheSandboxClock moves the sandbox's clock 23
// days ahead through its control route, then walks the whole route table
// (/v1, /v2, /v3, /oauth, documents, /sandbox controls; refusals and
// unknown routes too) on a real listener: every answer's Date header is
// the sandbox's time, not the host's. A client that reads the service's
// time from its answers (api.ServiceClock) relies on it.
func TestEveryAnswerIsDatedByTheSandboxClock(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_date", ClientSecret: "Client_Secret_date"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	dated := func(resp *http.Response, what string, want time.Time) {
		t.Helper()
		h := resp.Header.Get("Date")
		got, err := http.ParseTime(h)
		if err != nil {
			t.Errorf("%s: Date %q: %v", what, h, err)
			return
		}
		if d := got.Sub(want); d < -5*time.Second || d > 5*time.Second {
			t.Errorf("%s: Date %s, want the sandbox's %s", what, got.UTC().Format(time.RFC3339), want.UTC().Format(time.RFC3339))
		}
	}
	// before the move: the sandbox's time is the host's
	resp, _ := callRoute(t, client, rn, "", "", http.MethodGet, "/sandbox/clock")
	dated(resp, "GET /sandbox/clock before the move", time.Now())

	resp, body := callRoute(t, client, rn, "", "", http.MethodPost, "/sandbox/clock/advance")
	if resp.StatusCode != http.StatusBadRequest { // "{}" names no duration: refused, and dated
		t.Fatalf("advance with {}: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodPost, rn.URL+"/sandbox/clock/advance", strings.NewReader(`{"duration":"23d"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Now string `json:"now"`
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	ahead := 23 * 24 * time.Hour
	dated(resp, "POST /sandbox/clock/advance", time.Now().Add(ahead))
	now, err := time.Parse(time.RFC3339, st.Now)
	if err != nil || now.Sub(time.Now().Add(ahead)).Abs() > 5*time.Second {
		t.Fatalf("the sandbox's now after the move: %q %v", st.Now, err)
	}

	v1, pix := bearer(t, rn, rn.URL, "/v1/authorize"), bearer(t, rn, rn.PixURL, "/oauth/token")
	routes := rn.Server.Routes()
	seen := map[string]bool{}
	for _, pattern := range routes {
		method, path, _ := strings.Cut(pattern, " ")
		path = routePath(path)
		seen[strings.SplitN(path, "/", 3)[1]] = true
		resp, _ := callRoute(t, client, rn, v1, pix, method, path)
		dated(resp, pattern+" ("+resp.Status+")", time.Now().Add(ahead))
	}
	for _, prefix := range []string{"v1", "v2", "v3", "oauth", "sandbox"} {
		if !seen[prefix] {
			t.Errorf("no route under /%s in the table", prefix)
		}
	}
	// an unknown route, a refused token and a panic are dated too
	for _, c := range []struct{ method, path, v1 string }{
		{http.MethodGet, "/v1/nao-existe", v1},
		{http.MethodGet, "/v1/charges?charge_type=billet", "token-invalido"},
		{http.MethodGet, sandboxtest.PanicV1, v1},
	} {
		resp, body := callRoute(t, client, rn, c.v1, pix, c.method, c.path)
		if resp.StatusCode < 400 {
			t.Errorf("%s %s: %d %s, want a refusal", c.method, c.path, resp.StatusCode, body)
		}
		dated(resp, c.method+" "+c.path+" ("+resp.Status+")", time.Now().Add(ahead))
	}
}
