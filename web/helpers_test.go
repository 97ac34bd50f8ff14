package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"remessa/sandbox/control"
)

// testAdminPassword is the first administrator's password in startServer.
const testAdminPassword = "senha-do-admin-1"

// startServer starts the app on a loopback port with a fresh data folder
// (holding only a migrated, empty web.db: migratedDataDir) and the first
// administrator "admin" (password testAdminPassword); it is closed when
// the test ends.
func startServer(t testing.TB) *Server {
	t.Helper()
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: migratedDataDir(t), AdminPassword: testAdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

var migratedWebDB struct {
	once sync.Once
	b    []byte
	err  error
}

// migratedDataDir is a new data folder holding a web.db that has every
// migration (web.db's steps and River's) and no rows: the migrations,
// under -race about half a CPU-second of SQLite parsing DDL, run once per
// test binary instead of at every desk start. New then finds the schema
// up to date and creates the administrator and the embedded account as
// on an empty folder. The migrations from nothing are still what the
// tests that call New on a t.TempDir() of their own go through
// (TestUploadRefusals, TestMetricsMove, TestTLSSecureCookie,
// TestNewerWebDBRefused, the kill -9 tests' `remessa web` processes…).
func migratedDataDir(t testing.TB) string {
	t.Helper()
	migratedWebDB.once.Do(func() {
		dir, err := os.MkdirTemp("", "remessa-webdb-")
		if err != nil {
			migratedWebDB.err = err
			return
		}
		defer os.RemoveAll(dir)
		db, rdb, err := openDB(context.Background(), dir)
		if err != nil {
			migratedWebDB.err = err
			return
		}
		// everything in web.db itself, no -wal beside it
		_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		rdb.Close()
		db.Close()
		if err != nil {
			migratedWebDB.err = err
			return
		}
		migratedWebDB.b, migratedWebDB.err = os.ReadFile(filepath.Join(dir, DBFile))
	})
	if migratedWebDB.err != nil {
		t.Fatalf("the migrated web.db: %v", migratedWebDB.err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DBFile), migratedWebDB.b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// client is a browser without JavaScript: a cookie jar, the session's
// CSRF token (kept up to date from every page's data-csrf), and redirects
// followed as a browser does.
type client struct {
	t    testing.TB
	srv  *Server
	http *http.Client
	csrf string
}

// response is what a request ended on, after redirects.
type response struct {
	Status int
	Body   string
	URL    *url.URL // the last URL (after redirects)
	Header http.Header
}

var (
	helperCSRFField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	helperCSRFAttr  = regexp.MustCompile(`<main[^>]* data-csrf="([^"]+)"`)
)

// newClient is a client with an empty cookie jar (signed out).
func newClient(t testing.TB, srv *Server) *client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	// a request may take until the test's deadline: a sign-in, an upload
	// or a status refresh under -race on a busy machine took over 30 s
	return &client{t: t, srv: srv, http: &http.Client{Jar: jar, Timeout: time.Until(testDeadline(t))}}
}

// login signs user in through the sign-in form and fails the test when
// that does not work.
func login(t testing.TB, srv *Server, user, password string) *client {
	t.Helper()
	c, err := tryLogin(t, srv, user, password)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tryLogin signs user in through the sign-in form (GET /entrar for the
// pre-session token and cookie, POST /entrar) and returns the signed-in
// client, or an error saying why not. It clears the server's sign-in rate
// limiter first, so tests may sign in any number of times (a test of the
// limiter itself must post /entrar on its own).
func tryLogin(t testing.TB, srv *Server, user, password string) (*client, error) {
	t.Helper()
	srv.limiter.mu.Lock()
	srv.limiter.m = nil
	srv.limiter.mu.Unlock()
	c := newClient(t, srv)
	r := c.get("/entrar")
	m := helperCSRFField.FindStringSubmatch(r.Body)
	if r.Status != http.StatusOK || m == nil {
		return nil, fmt.Errorf("GET /entrar: status %d, token found %v", r.Status, m != nil)
	}
	r = c.send(http.MethodPost, "/entrar", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"usuario": {user}, "senha": {password}, "csrf": {m[1]}}.Encode()))
	if r.Status != http.StatusOK || r.URL.Path == "/entrar" || c.csrf == "" {
		return nil, fmt.Errorf("sign in as %s: status %d at %s", user, r.Status, r.URL.Path)
	}
	return c, nil
}

// get GETs path.
func (c *client) get(path string) *response {
	c.t.Helper()
	return c.send(http.MethodGet, path, "", nil)
}

// postForm posts form to path with the session's CSRF token added (unless
// form has a csrf field already).
func (c *client) postForm(path string, form url.Values) *response {
	c.t.Helper()
	v := url.Values{}
	for k, vs := range form {
		v[k] = append([]string(nil), vs...)
	}
	if _, ok := v["csrf"]; !ok {
		v.Set("csrf", c.csrf)
	}
	return c.send(http.MethodPost, path, "application/x-www-form-urlencoded", strings.NewReader(v.Encode()))
}

// upload is a file in a multipart form.
type upload struct {
	Field, Name string
	Data        []byte
}

// postMultipart posts fields and files as multipart/form-data, with the
// session's CSRF token added.
func (c *client) postMultipart(path string, fields url.Values, files ...upload) *response {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if _, ok := fields["csrf"]; !ok {
		mw.WriteField("csrf", c.csrf)
	}
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	for _, f := range files {
		w, err := mw.CreateFormFile(f.Field, f.Name)
		if err != nil {
			c.t.Fatal(err)
		}
		w.Write(f.Data)
	}
	if err := mw.Close(); err != nil {
		c.t.Fatal(err)
	}
	return c.send(http.MethodPost, path, mw.FormDataContentType(), &buf)
}

// send makes a request and reads the page it ends on; a page of the
// session (not the sign-in page) updates the client's CSRF token.
func (c *client) send(method, path, contentType string, body io.Reader) *response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.srv.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	r := &response{Status: resp.StatusCode, Body: string(b), URL: resp.Request.URL, Header: resp.Header}
	if r.URL.Path != "/entrar" {
		if m := helperCSRFAttr.FindStringSubmatch(r.Body); m != nil {
			c.csrf = m[1]
		}
	}
	return r
}

// signedIn reports whether the client's session still opens the home page.
func (c *client) signedIn() bool {
	c.t.Helper()
	r := c.get("/")
	return r.Status == http.StatusOK && r.URL.Path == "/"
}

// sandboxControl is a client of the control routes (clock, payments) of
// the sandbox at base whose requests may take until the test's deadline:
// control.Client's default 30 s was too short for a clock advance with
// the package's other tests on the cores.
func sandboxControl(t testing.TB, base string) *control.Client {
	return &control.Client{BaseURL: base, HTTP: &http.Client{Timeout: time.Until(testDeadline(t))}}
}
