package web

// The browser-test harness: the app on a loopback port, driven by headless
// Chromium through chromedp, plus small net/http helpers (prefix bt) for the
// checks that need no browser.
//
// Helpers for other tests in this package:
//
//	srv := btServer(t)                       // the app, admin/adminTestPassword, closed at the end
//	ctx := newBrowser(t)                     // a fresh tab and browser context of the shared Chromium, 1280x800
//	browserViewport(t, ctx, 390)             // window width (height follows)
//	browserLogin(t, ctx, srv, "admin", adminTestPassword) // through the real form, waits for the home page
//	status := browserGo(t, ctx, srv.URL+"/x")             // navigate and wait for the load; HTTP status
//	status = browserClick(t, ctx, "form[action='/sair'] button") // click what navigates; waits; status
//	browserTap(t, ctx, "input[name=kind][value=carnets]")        // click what does not navigate (radio, checkbox)
//	browserWait(t, ctx, ".badge.done")       // wait (until the test's deadline) until a selector is visible
//	browserType(t, ctx, "input[name=x]", "text"); browserSelect(t, ctx, "select[name=y]", "v")
//	browserUpload(t, ctx, "input[type=file]", "/abs/planilha.xlsx")
//	browserText(t, ctx, "h1"), browserHas(t, ctx, ".error"), browserPath(t, ctx)
//	rec := browserErrors(t, ctx); ...; browserCheckConsole(t, rec) // no script exception or CSP refusal
//	shot(t, ctx, "home-390")                 // full-page PNG into $REMESSA_SCREENSHOTS or a kept temp folder
//	u := btLogin(t, srv, "admin", adminTestPassword)     // net/http client with a session and its CSRF token
//	resp := u.post(t, "/sair", nil, true)    // POST a form with (or without) the token; redirects not followed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// adminTestPassword is the first administrator's password in btServer.
const adminTestPassword = testAdminPassword

// btServer starts the app on a loopback port with a fresh data folder; it
// is closed when the test ends.
func btServer(t testing.TB) *Server { return startServer(t) }

// chromiumPath finds Chromium. Without it a test fails in CI (CI is set)
// and skips elsewhere.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI must run the browser tests; install chromium (none of chromium, chromium-browser, google-chrome is on PATH)")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH: the browser tests need one (apt-get install chromium)")
	return ""
}

// newBrowser opens a tab of this test process's one headless Chromium
// in a browser context of its own (cookies, storage and cache as fresh as
// a new profile's) with a 1280x800 window and returns its context; the tab
// and its browser context are closed when the test ends. Every action of
// the helpers below runs on this one tab and may take until the test's
// deadline (testDeadline), however busy the machine.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	exe := chromiumPath(t)
	bctx := sharedChromium(t, exe)
	tctx, cancelTab := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	ctx, cancel := context.WithDeadline(tctx, testDeadline(t))
	// Cleanups run last-in first-out: the deadline's timer, then the tab
	// and its browser context (cancelTab waits until they are closed).
	t.Cleanup(cancelTab)
	t.Cleanup(cancel)
	// the first Run on the context opens the tab
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("open a tab in %s: %v", exe, err)
	}
	return ctx
}

// newBrowserFor is newBrowser; the timeout it once took is the test's
// deadline now.
func newBrowserFor(t testing.TB, _ time.Duration) context.Context {
	t.Helper()
	return newBrowser(t)
}

// testDeadline is when what a test waits for (a page, a request, a run)
// must be done: a minute before go test's -timeout ends the whole process
// (so that the test fails saying what it waited for rather than with a
// panic of every goroutine), or in 10 minutes without -timeout. A fixed
// bound of a few seconds was too short on a busy machine under -race.
func testDeadline(t testing.TB) time.Time {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			return dl.Add(-time.Minute)
		}
	}
	return time.Now().Add(10 * time.Minute)
}

// chrome is the one headless Chromium of this test process: starting a
// browser per test cost 1–3 s of CPU each under load; a tab in a new
// browser context isolates a test as well. It starts on first use (again
// if it died) and stopChromium ends it from TestMain.
var chrome struct {
	mu          sync.Mutex
	ctx         context.Context // the browser's first tab; tests open others
	cancel      func()
	cancelAlloc context.CancelFunc
	dir         string // its profile folder, removed by stopChromium
}

// sharedChromium returns the context of the shared browser's first tab,
// starting Chromium when it is not running.
func sharedChromium(t testing.TB, exe string) context.Context {
	t.Helper()
	chrome.mu.Lock()
	defer chrome.mu.Unlock()
	if chrome.ctx != nil && chrome.ctx.Err() == nil {
		return chrome.ctx
	}
	stopChromiumLocked()
	dir, err := os.MkdirTemp("", "remessa-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dir),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	chrome.ctx, chrome.cancelAlloc, chrome.dir = bctx, cancelAlloc, dir
	chrome.cancel = func() {
		chromedp.Cancel(bctx)
		cancelBrowser()
	}
	// The first Run starts the browser; it must not carry a timeout (the
	// browser would end with it). It may take until the test's deadline.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err = <-started:
	case <-time.After(time.Until(testDeadline(t))):
		err = errors.New("no answer")
	}
	if err != nil {
		stopChromiumLocked()
		t.Fatalf("start %s: %v", exe, err)
	}
	return chrome.ctx
}

// stopChromium ends the shared browser, if one started, and removes its
// profile folder (TestMain calls it after the tests).
func stopChromium() {
	chrome.mu.Lock()
	defer chrome.mu.Unlock()
	stopChromiumLocked()
}

func stopChromiumLocked() {
	if chrome.cancel != nil {
		chrome.cancel()
		chrome.cancelAlloc() // waits for the process
	}
	if chrome.dir != "" {
		os.RemoveAll(chrome.dir)
	}
	chrome.ctx, chrome.cancel, chrome.cancelAlloc, chrome.dir = nil, nil, nil, ""
}

// browserErrors starts recording what a person would see in the
// browser's console as a problem: uncaught script exceptions and error
// entries (a Content-Security-Policy refusal, a failed resource load). The
// returned func gives what was recorded so far.
func browserErrors(t testing.TB, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	add := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	entries := chromedp.Events(ctx, cdplog.EntryAdded)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			if d := ev.ExceptionDetails; d != nil {
				msg := d.Text
				if d.Exception != nil && d.Exception.Description != "" {
					msg += " " + d.Exception.Description
				}
				add(fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
			}
		}
	}()
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if e := ev.Entry; e != nil && e.Level == cdplog.EntryLevelError {
				add(fmt.Sprintf("%s error: %s (%s)", e.Source, e.Text, e.URL))
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// browserCheckConsole fails the test for every script exception and
// every console error other than a network one (an expected 401 or 404 of
// a page is logged as a network error) that rec recorded.
func browserCheckConsole(t testing.TB, rec func() []string) {
	t.Helper()
	for _, e := range rec() {
		if !strings.HasPrefix(e, "network error:") {
			t.Errorf("browser console: %s", e)
		}
	}
}

// browserViewport sets the window width in CSS pixels (390 is a phone,
// 1280 a laptop); the height is 844 for narrow windows, else 800.
func browserViewport(t testing.TB, ctx context.Context, width int64) {
	t.Helper()
	height := int64(800)
	if width < 600 {
		height = 844
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("viewport %d: %v", width, err)
	}
}

// browserAcceptLanguage makes every following request send this
// Accept-Language header (as a browser set to that language does).
func browserAcceptLanguage(t testing.TB, ctx context.Context, value string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Accept-Language": value}}); err != nil {
		t.Fatalf("Accept-Language %q: %v", value, err)
	}
}

// browserGo navigates to u, waits for the page to load and returns the
// HTTP status of the document (after redirects).
func browserGo(t testing.TB, ctx context.Context, u string) int64 {
	t.Helper()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	if resp == nil {
		return 0
	}
	return resp.Status
}

// browserClick clicks the first element matching the CSS selector, which
// must lead to a new page (a link, a form's button), waits for that page
// to load and returns its HTTP status.
func browserClick(t testing.TB, ctx context.Context, sel string) int64 {
	t.Helper()
	if !browserHas(t, ctx, sel) {
		t.Fatalf("click %s: no such element on %s", sel, browserPath(t, ctx))
	}
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	if resp == nil {
		return 0
	}
	return resp.Status
}

// browserTap clicks the first element matching sel without waiting for a
// new page (a radio button, a checkbox, a button handled by a script). Use
// browserClick for what navigates: browserClick waits for a page load,
// which a radio button never causes.
func browserTap(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	if !browserHas(t, ctx, sel) {
		t.Fatalf("tap %s: no such element on %s", sel, browserPath(t, ctx))
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("tap %s: %v", sel, err)
	}
}

// browserType types text into the field matching sel (with key events).
func browserType(t testing.TB, ctx context.Context, sel, text string) {
	t.Helper()
	if !browserHas(t, ctx, sel) {
		t.Fatalf("type into %s: no such element on %s", sel, browserPath(t, ctx))
	}
	browserEval[bool](t, ctx, "(e => (e.value = '', true))(document.querySelector("+jsString(sel)+"))")
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), text)); err != nil {
		t.Fatalf("type into %s: %v", sel, err)
	}
}

// browserWait waits for an element matching sel to be visible (for pages
// that change without a navigation), until the test's deadline.
func browserWait(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("wait for %s on %s: %v", sel, browserPath(t, ctx), err)
	}
}

// browserUpload puts files (absolute paths) into the file input matching sel.
func browserUpload(t testing.TB, ctx context.Context, sel string, files ...string) {
	t.Helper()
	if !browserHas(t, ctx, sel) {
		t.Fatalf("upload into %s: no such element on %s", sel, browserPath(t, ctx))
	}
	for i, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		files[i] = abs
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(sel), files)); err != nil {
		t.Fatalf("upload into %s: %v", sel, err)
	}
}

// browserSelect picks value in the <select> (or sets the value of the
// input) matching sel and fires input and change, as a person's choice does.
func browserSelect(t testing.TB, ctx context.Context, sel, value string) {
	t.Helper()
	ok := browserEval[bool](t, ctx, "(e => { if (!e) return false; e.value = "+jsString(value)+
		"; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return e.value === "+
		jsString(value)+"; })(document.querySelector("+jsString(sel)+"))")
	if !ok {
		t.Fatalf("choose %q in %s on %s: no such element or option", value, sel, browserPath(t, ctx))
	}
}

// browserEval evaluates a JavaScript expression and decodes its value.
func browserEval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// browserHas reports whether an element matching the CSS selector is on
// the page now (no waiting).
func browserHas(t testing.TB, ctx context.Context, sel string) bool {
	t.Helper()
	return browserEval[bool](t, ctx, "document.querySelector("+jsString(sel)+") !== null")
}

// browserText is the visible text of the first element matching sel,
// trimmed; the test fails when there is none.
func browserText(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	v := browserEval[*string](t, ctx, "(e => e ? e.innerText : null)(document.querySelector("+jsString(sel)+"))")
	if v == nil {
		t.Fatalf("no %s on %s", sel, browserPath(t, ctx))
	}
	return strings.TrimSpace(*v)
}

// browserPath is the current page's path and query ("/entrar?volta=%2F").
func browserPath(t testing.TB, ctx context.Context) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("location.pathname + location.search"))
	if err != nil {
		return "(unknown page: " + err.Error() + ")"
	}
	return v
}

// browserOverflow is how many CSS pixels the page is wider than the
// window (0 when nothing needs sideways scrolling).
func browserOverflow(t testing.TB, ctx context.Context) int {
	t.Helper()
	return browserEval[int](t, ctx, "Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)")
}

// browserBothWidths photographs the page at 1280 and 390 px (name-1280,
// name-390) and fails the test when a table scrolls sideways inside its
// frame, when on the laptop a table is not laid out as one, or when on the
// phone the page scrolls sideways.
func browserBothWidths(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	shot(t, ctx, name+"-1280")
	// on a laptop every table is laid out as a table (a class's style
	// meant for something else once made one a column of blocks)
	if bad := browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll('table'))
		.filter(x => getComputedStyle(x).display !== 'table').map(x => x.id || x.className || 'table')`); len(bad) > 0 {
		t.Errorf("%s at 1280 px: tables not laid out as tables: %q", name, bad)
	}
	if w := wideTables(t, ctx); len(w) > 0 {
		t.Errorf("%s at 1280 px: tables scroll sideways in their frame: %q", name, w)
	}
	browserViewport(t, ctx, 390)
	shot(t, ctx, name+"-390")
	if o := browserOverflow(t, ctx); o > 0 {
		t.Errorf("%s scrolls sideways by %d px at 390 px", name, o)
	}
	if w := wideTables(t, ctx); len(w) > 0 {
		t.Errorf("%s at 390 px: tables scroll sideways in their frame: %q", name, w)
	}
	browserViewport(t, ctx, 1280)
}

// wideTables returns the headings of the tables on the page that scroll
// sideways inside their frame (the sheet's grid excepted).
func wideTables(t testing.TB, ctx context.Context) []string {
	t.Helper()
	return browserEval[[]string](t, ctx, `Array.from(document.querySelectorAll('.table-wrap'))
		.filter(w => !w.querySelector('table.sheet') && w.scrollWidth > w.clientWidth + 1)
		.map(w => { const h = w.closest('section') && w.closest('section').querySelector('h2'); return (h ? h.textContent : '') + ' +' + (w.scrollWidth - w.clientWidth) + 'px' })`)
}

// submitLogin fills the sign-in form at /entrar with user and password,
// submits it and returns the status of the page it lands on.
func submitLogin(t testing.TB, ctx context.Context, srv *Server, user, password string) int64 {
	t.Helper()
	if !strings.HasPrefix(browserPath(t, ctx), "/entrar") {
		browserGo(t, ctx, srv.URL+"/entrar")
	}
	browserType(t, ctx, "input[name=usuario]", user)
	browserType(t, ctx, "input[name=senha]", password)
	return browserClick(t, ctx, "form[action='/entrar'] button")
}

// browserLogin signs in through the real form and waits for the home page
// (or wherever the form sends the user back to); the test fails when the
// browser is not signed in as user afterwards.
func browserLogin(t testing.TB, ctx context.Context, srv *Server, user, password string) {
	t.Helper()
	status := submitLogin(t, ctx, srv, user, password)
	if status != http.StatusOK || strings.HasPrefix(browserPath(t, ctx), "/entrar") {
		msg := ""
		if browserHas(t, ctx, ".error") {
			msg = browserText(t, ctx, ".error")
		}
		t.Fatalf("sign in as %s: status %d on %s %s", user, status, browserPath(t, ctx), msg)
	}
	browserWait(t, ctx, "header .who form[action='/sair']")
	if got := browserText(t, ctx, "header .who span"); got != user {
		t.Fatalf("signed in as %s, the header shows %q", user, got)
	}
}

// Screenshots go to $REMESSA_SCREENSHOTS, else to one temporary folder
// per test process that is kept for a person to look at.
var (
	shotDirOnce sync.Once
	shotDirPath string
	shotDirErr  error
	shotLogged  sync.Map // test name -> true once the folder was logged in it
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// shot writes a full-page PNG of the current page as <Test>_<name>.png
// and logs the folder (once per test).
func shot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	shotDirOnce.Do(func() {
		if d := os.Getenv("REMESSA_SCREENSHOTS"); d != "" {
			shotDirPath, shotDirErr = d, os.MkdirAll(d, 0o755)
			return
		}
		shotDirPath, shotDirErr = os.MkdirTemp("", "remessa-screenshots-")
	})
	if shotDirErr != nil {
		t.Fatalf("screenshot folder: %v", shotDirErr)
	}
	if _, seen := shotLogged.LoadOrStore(t.Name(), true); !seen {
		t.Logf("screenshots in %s", shotDirPath)
	}
	// The window is made as tall as the page for the picture: Chromium's
	// full-page capture leaves parts of a sideways-scrolling table below
	// the first screen unpainted otherwise. A page that reloads itself
	// meanwhile (the run page, when its run ends) stops answering: each
	// try is bounded and a failed one is tried again on the new page.
	var png []byte
	var err error
	for try := 0; try < 4; try++ {
		if png, err = captureTall(ctx); err == nil {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) < 8 || string(png[:8]) != "\x89PNG\r\n\x1a\n" {
		t.Fatalf("screenshot %s is not a PNG", name)
	}
	file := filepath.Join(shotDirPath, unsafeName.ReplaceAllString(t.Name()+"_"+name, "_")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// browserCookie is the browser's cookie called name for the app, or nil.
func browserCookie(t testing.TB, ctx context.Context, srv *Server, name string) *network.Cookie {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{srv.URL + "/"}})
	if err != nil {
		t.Fatalf("read cookies: %v", err)
	}
	for _, c := range res.Cookies {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ---- net/http helpers (no browser) ----

// btUser is a signed-in net/http client: its cookie jar holds the session
// and CSRF is the session's token (as the pages carry it).
type btUser struct {
	srv    *Server
	client *http.Client
	CSRF   string
	Name   string
}

// btClient is an HTTP client with its own cookie jar that does not follow
// redirects (tests look at the 303s).
func btClient(t testing.TB) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: time.Until(testDeadline(t)),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	csrfAttr  = regexp.MustCompile(`data-csrf="([^"]+)"`)
)

// btLoginForm GETs /entrar with c and returns the form's pre-session token
// (the remessa_entrada cookie is now in c's jar).
func btLoginForm(t testing.TB, srv *Server, c *http.Client) string {
	t.Helper()
	resp, err := c.Get(srv.URL + "/entrar")
	if err != nil {
		t.Fatal(err)
	}
	body := btBody(t, resp)
	m := csrfField.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET /entrar: status %d, token found %v", resp.StatusCode, m != nil)
	}
	return m[1]
}

// btLogin signs user in through the login form over plain HTTP and reads
// the session's CSRF token from the home page.
func btLogin(t testing.TB, srv *Server, user, password string) *btUser {
	t.Helper()
	c := btClient(t)
	tok := btLoginForm(t, srv, c)
	resp, err := c.PostForm(srv.URL+"/entrar", url.Values{"usuario": {user}, "senha": {password}, "csrf": {tok}})
	if err != nil {
		t.Fatal(err)
	}
	body := btBody(t, resp)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in as %s: status %d\n%.400s", user, resp.StatusCode, body)
	}
	u := &btUser{srv: srv, client: c, Name: user}
	resp = u.get(t, "/")
	body = btBody(t, resp)
	m := csrfAttr.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("home page after signing in as %s: status %d, token found %v", user, resp.StatusCode, m != nil)
	}
	u.CSRF = m[1]
	return u
}

// btUserWithRole creates a user with role (password username+"-senha-1")
// and signs them in over HTTP.
func btUserWithRole(t testing.TB, srv *Server, username string, role Role) *btUser {
	t.Helper()
	pw := username + "-senha-1"
	if _, err := srv.createUser(context.Background(), username, "Teste "+username, pw, role); err != nil {
		t.Fatalf("create %s: %v", username, err)
	}
	return btLogin(t, srv, username, pw)
}

func (u *btUser) get(t testing.TB, path string) *http.Response {
	t.Helper()
	resp, err := u.client.Get(u.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// post sends form (nil = empty) to path with the given method ("" = POST);
// withCSRF adds the session's token as the csrf field.
func (u *btUser) send(t testing.TB, method, path string, form url.Values, withCSRF bool) *http.Response {
	t.Helper()
	return btSend(t, u.client, u.srv, method, path, form, u.CSRF, withCSRF)
}

func (u *btUser) post(t testing.TB, path string, form url.Values, withCSRF bool) *http.Response {
	t.Helper()
	return u.send(t, http.MethodPost, path, form, withCSRF)
}

// btSend sends a form request with c; the csrf field is token when withCSRF.
func btSend(t testing.TB, c *http.Client, srv *Server, method, path string, form url.Values, token string, withCSRF bool) *http.Response {
	t.Helper()
	if method == "" {
		method = http.MethodPost
	}
	v := url.Values{}
	for k, vs := range form {
		v[k] = append([]string(nil), vs...)
	}
	if withCSRF {
		v.Set("csrf", token)
	}
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(v.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// btBody reads and closes a response body.
func btBody(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return string(b)
}

// btSignedIn reports whether u's session still opens the home page.
func (u *btUser) signedIn(t testing.TB) bool {
	t.Helper()
	resp := u.get(t, "/")
	body := btBody(t, resp)
	return resp.StatusCode == http.StatusOK && strings.Contains(body, ">"+u.Name+"</span>")
}

func btCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ---- the tests ----

func TestBrowserLogin(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t) // first: skips at once without Chromium
	srv := btServer(t)
	consoleErrors := browserErrors(t, ctx)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")

	// The sign-in page, wide and narrow.
	if st := browserGo(t, ctx, srv.URL+"/"); st != http.StatusOK {
		t.Fatalf("GET / without a session: status %d", st)
	}
	if p := browserPath(t, ctx); p != "/entrar?volta=%2F" {
		t.Errorf("/ without a session went to %s, want the sign-in page", p)
	}
	if h := browserText(t, ctx, "main h1"); h != "Entrar" {
		t.Errorf("sign-in heading %q", h)
	}
	for _, sel := range []string{"input[name=usuario][autocomplete=username]", "input[name=senha][type=password]", "input[name=csrf]", "form[action='/entrar'] button"} {
		if !browserHas(t, ctx, sel) {
			t.Errorf("sign-in page lacks %s", sel)
		}
	}
	browserBothWidths(t, ctx, "login")

	// A wrong password: the error, still on the sign-in page, no session.
	if st := submitLogin(t, ctx, srv, "admin", "senha-errada-123"); st != http.StatusUnauthorized {
		t.Errorf("wrong password: status %d, want 401", st)
	}
	if p := browserPath(t, ctx); p != "/entrar" {
		t.Errorf("wrong password went to %s", p)
	}
	if e := browserText(t, ctx, ".error[role=alert]"); e != tr("pt", "login.bad") {
		t.Errorf("wrong password shows %q, want %q", e, tr("pt", "login.bad"))
	}
	if browserHas(t, ctx, "form[action='/sair']") {
		t.Error("wrong password: the page offers to sign out")
	}
	if c := browserCookie(t, ctx, srv, sessionCookie); c != nil {
		t.Errorf("wrong password left a session cookie %+v", c)
	}
	shot(t, ctx, "login-wrong-password")

	// The right one: the home page with the username and, for an admin,
	// "Nova remessa".
	browserLogin(t, ctx, srv, "admin", adminTestPassword)
	if p := browserPath(t, ctx); p != "/" {
		t.Errorf("signed in at %s, want /", p)
	}
	if h := browserText(t, ctx, "main h1"); h != tr("pt", "home.title") {
		t.Errorf("home heading %q", h)
	}
	if !browserHas(t, ctx, "a.btn[href='/remessas/nova']") || !strings.Contains(browserText(t, ctx, "main"), "Nova remessa") {
		t.Error(`the admin's home page has no "Nova remessa" button`)
	}
	browserBothWidths(t, ctx, "home")

	// The session cookie: HttpOnly, SameSite=Strict, invisible to scripts.
	c := browserCookie(t, ctx, srv, sessionCookie)
	if c == nil {
		t.Fatal("no session cookie after signing in")
	}
	if !c.HTTPOnly {
		t.Error("the session cookie is not HttpOnly")
	}
	if c.SameSite != network.CookieSameSiteStrict {
		t.Errorf("the session cookie is SameSite=%q, want Strict", c.SameSite)
	}
	if c.Path != "/" {
		t.Errorf("the session cookie's path is %q", c.Path)
	}
	if dc := browserEval[string](t, ctx, "document.cookie"); strings.Contains(dc, sessionCookie) || strings.Contains(dc, c.Value) {
		t.Errorf("document.cookie shows the session: %q", dc)
	}
	old := c.Value

	// No script failed and the Content-Security-Policy refused nothing.
	browserCheckConsole(t, consoleErrors)

	// Sign out: back to /entrar, and the old cookie opens nothing.
	if st := browserClick(t, ctx, "header form[action='/sair'] button"); st != http.StatusOK {
		t.Errorf("sign out: status %d", st)
	}
	if p := browserPath(t, ctx); p != "/entrar" {
		t.Errorf("signed out at %s, want /entrar", p)
	}
	if c := browserCookie(t, ctx, srv, sessionCookie); c != nil {
		t.Errorf("the session cookie is still in the browser after signing out")
	}
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: sessionCookie, Value: old,
		URL: srv.URL + "/", HTTPOnly: new(true), SameSite: network.CookieSameSiteStrict}); err != nil {
		t.Fatal(err)
	}
	browserGo(t, ctx, srv.URL+"/")
	if p := browserPath(t, ctx); !strings.HasPrefix(p, "/entrar") {
		t.Errorf("the old session cookie still opens / (at %s)", p)
	}
	// and over plain HTTP as well
	hc := btClient(t)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: old})
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	btBody(t, resp)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/entrar") {
		t.Errorf("GET / with the old cookie: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestBrowserLanguage(t *testing.T) {
	t.Parallel()
	srv := btServer(t)

	t.Run("choice", func(t *testing.T) {
		ctx := newBrowser(t)
		consoleErrors := browserErrors(t, ctx)
		defer browserCheckConsole(t, consoleErrors)
		browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
		browserGo(t, ctx, srv.URL+"/entrar")
		if h := browserText(t, ctx, "main h1"); h != "Entrar" {
			t.Fatalf("a Portuguese browser sees %q", h)
		}
		browserGo(t, ctx, srv.URL+"/entrar?lang=en")
		if h := browserText(t, ctx, "main h1"); h != "Sign in" {
			t.Errorf("?lang=en shows %q", h)
		}
		if l := browserEval[string](t, ctx, "document.documentElement.lang"); l != "en" {
			t.Errorf("?lang=en: <html lang=%q>", l)
		}
		// it sticks: no parameter, then signed in
		browserGo(t, ctx, srv.URL+"/entrar")
		if h := browserText(t, ctx, "main h1"); h != "Sign in" {
			t.Errorf("the English choice did not stick: %q", h)
		}
		if b := browserText(t, ctx, "form[action='/entrar'] button"); b != "Sign in" {
			t.Errorf("the button says %q", b)
		}
		shot(t, ctx, "login-en")
		browserLogin(t, ctx, srv, "admin", adminTestPassword)
		if h := browserText(t, ctx, "main h1"); h != tr("en", "home.title") {
			t.Errorf("home after an English sign-in: %q", h)
		}
		if b := browserText(t, ctx, "main a.btn[href='/remessas/nova']"); b != tr("en", "nav.new") {
			t.Errorf("the new-batch button says %q", b)
		}
		if b := browserText(t, ctx, "header form[action='/sair'] button"); b != "Sign out" {
			t.Errorf("sign-out says %q", b)
		}
		shot(t, ctx, "home-en")
		// the header link switches back, and that sticks too
		browserClick(t, ctx, "header a.lang")
		if h := browserText(t, ctx, "main h1"); h != tr("pt", "home.title") {
			// (the middleware's r.AddCookie leaves the old remessa_idioma
			// cookie first in the request, and langOf reads that one)
			t.Errorf("the page the Português link opens is still English: %q", h)
		}
		browserGo(t, ctx, srv.URL+"/")
		if h := browserText(t, ctx, "main h1"); h != tr("pt", "home.title") {
			t.Errorf("the Portuguese choice did not stick: %q", h)
		}
	})

	t.Run("accept-language", func(t *testing.T) {
		ctx := newBrowser(t)
		browserAcceptLanguage(t, ctx, "en-US,en;q=0.9")
		browserGo(t, ctx, srv.URL+"/entrar")
		if h := browserText(t, ctx, "main h1"); h != "Sign in" {
			t.Errorf("an English browser's first visit shows %q", h)
		}
		if l := browserText(t, ctx, "header a.lang"); l != "Português" {
			t.Errorf("the language link says %q", l)
		}
		// a wrong password is explained in English too
		submitLogin(t, ctx, srv, "admin", "wrong-password-1")
		if e := browserText(t, ctx, ".error"); e != tr("en", "login.bad") {
			t.Errorf("wrong password in English: %q", e)
		}
	})
}

func TestCSRFRefused(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	a := btLogin(t, srv, "admin", adminTestPassword)
	b := btUserWithRole(t, srv, "outra", RoleViewer)
	if a.CSRF == b.CSRF {
		t.Fatal("two sessions share a CSRF token")
	}

	check := func(what string, resp *http.Response) {
		t.Helper()
		body := btBody(t, resp)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", what, resp.StatusCode)
		}
		if !strings.Contains(body, tr("pt", "err.csrf")) {
			t.Errorf("%s: the page does not say the form expired:\n%.300s", what, body)
		}
		if c := btCookie(resp, sessionCookie); c != nil {
			t.Errorf("%s: the response sets the session cookie (%+v)", what, c)
		}
		if !a.signedIn(t) {
			t.Fatalf("%s: the session ended", what)
		}
	}
	check("POST /sair without the token", a.post(t, "/sair", nil, false))
	check("POST /sair with an empty token", a.post(t, "/sair", url.Values{"csrf": {""}}, false))
	check("POST /sair with another session's token", btSend(t, a.client, srv, "", "/sair", nil, b.CSRF, true))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/sair", nil)
	req.Header.Set("X-CSRF-Token", b.CSRF)
	resp, err := a.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	check("POST /sair with another session's token in X-CSRF-Token", resp)
	if !b.signedIn(t) {
		t.Error("the other session ended")
	}

	// The sign-in form needs its remessa_entrada cookie and the same value
	// in the form; the right password does not help without them.
	loginRefused := func(what string, c *http.Client, token string) {
		t.Helper()
		resp := btSend(t, c, srv, "", "/entrar", url.Values{"usuario": {"admin"}, "senha": {adminTestPassword}}, token, token != "")
		body := btBody(t, resp)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", what, resp.StatusCode)
		}
		if btCookie(resp, sessionCookie) != nil {
			t.Errorf("%s: signed in anyway", what)
		}
		if !strings.Contains(body, tr("pt", "err.csrf")) {
			t.Errorf("%s: the page does not say the form expired:\n%.300s", what, body)
		}
	}
	loginRefused("sign-in with neither cookie nor field", btClient(t), "")
	c1, c2 := btClient(t), btClient(t)
	tok1, tok2 := btLoginForm(t, srv, c1), btLoginForm(t, srv, c2)
	loginRefused("sign-in with the cookie but no field", c1, "")
	loginRefused("sign-in with another form's field", c1, tok2)
	loginRefused("sign-in with a field but no cookie", btClient(t), tok1)

	// The same form with its own token signs in (the refusals above were
	// the token's doing), and signing out with the token works.
	u := btLogin(t, srv, "admin", adminTestPassword)
	resp = u.post(t, "/sair", nil, true)
	btBody(t, resp)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/entrar" {
		t.Errorf("POST /sair with the token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if u.signedIn(t) {
		t.Error("still signed in after signing out")
	}
	if !a.signedIn(t) {
		t.Error("signing out one session ended another")
	}
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// routeRequest turns a ServeMux pattern into a method and a path:
// "POST /remessas/{id}/executar" -> POST /remessas/1/executar. A pattern
// without a method is tried with POST; a host part is dropped.
func routeRequest(pattern string) (method, path string) {
	method, path = http.MethodPost, pattern
	if m, p, ok := strings.Cut(pattern, " "); ok {
		method, path = m, strings.TrimSpace(p)
	}
	if i := strings.Index(path, "/"); i > 0 {
		path = path[i:] // host-specific pattern
	}
	path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
		if w == "{$}" {
			return ""
		}
		return "1"
	})
	return method, path
}

func TestRouteRequest(t *testing.T) {
	for pattern, want := range map[string]string{
		"POST /remessas/{id}/executar": "POST /remessas/1/executar",
		"DELETE /a/{x}/b/{rest...}":    "DELETE /a/1/b/1",
		"/x/{$}":                       "POST /x/",
		"PUT example.com/y/{id}":       "PUT /y/1",
	} {
		if m, p := routeRequest(pattern); m+" "+p != want {
			t.Errorf("%s -> %s %s, want %s", pattern, m, p, want)
		}
	}
}

func TestEveryStateChangingRouteChecksRole(t *testing.T) {
	t.Parallel()
	srv := btServer(t)
	users := map[Role]*btUser{RoleAdmin: btLogin(t, srv, "admin", adminTestPassword)}
	for _, r := range Roles {
		if r != RoleAdmin {
			users[r] = btUserWithRole(t, srv, "papel-"+string(r), r)
		}
	}
	anon := btClient(t)
	routes := srv.Routes()
	if len(routes) == 0 {
		t.Fatal("srv.Routes() lists no route")
	}
	changing := 0
	for _, rt := range routes {
		method, path := routeRequest(rt.Pattern)
		if method == http.MethodGet || method == http.MethodHead {
			continue
		}
		if _, ok := roleRank[rt.Role]; !ok {
			t.Errorf("%s: unknown least role %q", rt.Pattern, rt.Role)
			continue
		}
		changing++
		// below the role, with a valid token: refused for the role
		for _, r := range Roles {
			if r.Allows(rt.Role) {
				continue
			}
			resp := users[r].send(t, method, path, nil, true)
			body := btBody(t, resp)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, tr("pt", "err.role")) {
				t.Errorf("%s as %s (needs %s): status %d, want 403 %q", rt.Pattern, r, rt.Role, resp.StatusCode, tr("pt", "err.role"))
			}
		}
		// no session: 401
		resp := btSend(t, anon, srv, method, path, nil, "", false)
		btBody(t, resp)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a session: status %d, want 401", rt.Pattern, resp.StatusCode)
		}
		// with the role but no token: 403, for the token
		for _, r := range Roles {
			if !r.Allows(rt.Role) {
				continue
			}
			resp := users[r].send(t, method, path, nil, false)
			body := btBody(t, resp)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, tr("pt", "err.csrf")) {
				t.Errorf("%s as %s without the CSRF token: status %d, want 403 %q", rt.Pattern, r, resp.StatusCode, tr("pt", "err.csrf"))
			}
		}
	}
	if changing == 0 {
		t.Fatal("no state-changing route in srv.Routes(); POST /sair at least should be there")
	}
	for r, u := range users {
		if !u.signedIn(t) {
			t.Errorf("the %s's session ended during the walk", r)
		}
	}
	t.Logf("%d state-changing routes checked against %d roles", changing, len(Roles))
}

// captureTall takes a full-page PNG with the window as tall as the page,
// then gives the window its height back; it gives up after 15 s (a page
// that stopped answering; a tall page's picture took over 5 s under load).
func captureTall(ctx context.Context) ([]byte, error) {
	tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	size, err := chromedp.Run(tctx, chromedp.Evaluate[[]int64]("[window.innerWidth, window.innerHeight, document.documentElement.scrollHeight]"))
	if err != nil {
		return nil, err
	}
	if len(size) != 3 {
		return nil, fmt.Errorf("window size %v", size)
	}
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(size[0], max(size[1], size[2]))); err != nil {
		return nil, err
	}
	defer chromedp.Do(ctx, chromedp.EmulateViewport(size[0], size[1]))
	// two animation frames: the resized page is laid out and painted
	fctx, fcancel := context.WithTimeout(tctx, time.Second)
	chromedp.Run(fctx, chromedp.Evaluate[bool](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise))
	fcancel()
	// the window is as tall as the page now: a capture of the window holds
	// it all at the window's width (FullScreenshot clipped a phone-width
	// page to its width less a scrollbar's, cutting its right edge)
	return chromedp.Run(tctx, chromedp.CaptureScreenshot())
}
