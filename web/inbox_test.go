package web

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"remessa/pipeline/listen"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
	"remessa/rules"
	"remessa/sandbox/control"
)

// inboxJob is a school's job uploaded with its sheet (followSheet: two
// families) without a notification_url: a carnet of two R$ 250,00
// parcels each.
const inboxJob = `version: 1
name: Mensalidades avisadas
service: embedded
input:
  file: alunos.csv
  key: Matrícula
  columns:
    name: Responsável
    value: Mensalidade
issue:
  carnets:
    repeats: 2
    first_due: 2027-03-03
    items:
      - name: "Mensalidade {{ .Aluno }}"
        value: "{{ .Mensalidade }}"
`

// syncBuffer is a log the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServerCfg is startServer with cfg's fields (Addr, DataDir and the
// administrator's password are the test's).
func startServerCfg(t testing.TB, cfg Config) *Server {
	t.Helper()
	cfg.Addr, cfg.DataDir, cfg.AdminPassword = "127.0.0.1:0", t.TempDir(), testAdminPassword
	srv, err := New(context.Background(), cfg)
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

// notifyToken is the token of account id's endpoints.
func notifyToken(t testing.TB, db *sql.DB, id int64) string {
	t.Helper()
	var tok string
	if err := db.QueryRow(`SELECT notify_token FROM accounts WHERE id = ?`, id).Scan(&tok); err != nil || len(tok) != tokenLen {
		t.Fatalf("account %d's token %q: %v", id, tok, err)
	}
	return tok
}

// postDelivery posts body to the desk's path as the service would (no
// cookie, no CSRF) and returns the status.
func postDelivery(t testing.TB, base, path, ct, body string) int {
	t.Helper()
	resp, err := http.Post(base+path, ct, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// inboxCarnetRun issues inboxJob on the embedded account through the
// desk and returns its run and results.
func inboxCarnetRun(t *testing.T, srv *Server, c *client) (*runRecord, *results.Results) {
	t.Helper()
	r := c.postMultipart("/remessas", url.Values{"kind": {"carnets"}, "account": {"1"}},
		upload{Field: "planilha", Name: "alunos.csv", Data: []byte(followSheet())},
		upload{Field: "job", Name: "job.yaml", Data: []byte(inboxJob)})
	if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/validacao") {
		t.Fatalf("upload: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	base := strings.TrimSuffix(r.URL.Path, "/validacao")
	if r = c.postForm(base+"/executar", nil); r.Status != http.StatusOK || !strings.HasPrefix(r.URL.Path, "/execucoes/") {
		t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, r.Body)
	}
	var id int64
	fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/execucoes/"), "%d", &id)
	rec := waitRun(t, srv, id, 90*time.Second)
	if rec.Status != "done" {
		t.Fatalf("run ended %s: %s", rec.Status, rec.Message)
	}
	res, err := results.Load(filepath.Join(rec.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return rec, res
}

// waitPage GETs path until its body has want; it logs when that takes
// longer than within and fails at the test's deadline (the other tests
// running in parallel make a busy machine).
func waitPage(t *testing.T, c *client, path, want string, within time.Duration) string {
	t.Helper()
	start, deadline, logged := time.Now(), testDeadline(t), false
	for {
		r := c.get(path)
		if r.Status == http.StatusOK && strings.Contains(r.Body, want) {
			return r.Body
		}
		if !logged && time.Since(start) > within {
			t.Logf("%s does not show %q after %s (a busy machine?)", path, want, within)
			logged = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q by the test's deadline, %s after it started waiting", path, want, time.Since(start).Round(time.Second))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sitReceived is the amount received the run page shows ("" when it
// shows no situation).
func sitReceived(body string) string {
	if m := sitReceivedRE.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}

var sitReceivedRE = regexp.MustCompile(`data-sit="received">([^<]*)<`)

// waitInboxStats waits until the test's deadline for ok on the desk's inbox
// counts.
func waitInboxStats(t *testing.T, srv *Server, ok func(listen.Stats) bool, what string) listen.Stats {
	t.Helper()
	deadline := testDeadline(t)
	for {
		st, err := srv.inbox.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the inbox is %+v at the test's deadline", what, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// received is how the run page shows an amount received.
func received(cents int64) string { return `data-sit="received">` + rules.FormatBRL(cents) + `<` }

// TestInboxNotifications: runs on the embedded account name the desk's own
// endpoints (a carnet's notification_url; a cobv key's webhook, registered
// when the run starts). Forgeries first: a delivery to a token no account
// has is refused (404), logged without the token, and kept nowhere; a
// notification token or a Pix the service never gave, posted to the
// account's real endpoints, is kept, read back, refused, logged, and
// changes no ledger nor page. Then a parcel and a cobv paid in the
// sandbox change their run pages by themselves, through the inbox and its
// River job, with nobody pressing "Atualizar situação".
func TestInboxNotifications(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	logs := &syncBuffer{}
	srv := startServerCfg(t, Config{SyncEvery: -1, Log: logs})
	c := login(t, srv, "admin", testAdminPassword)
	tok := notifyToken(t, srv.db, 1)
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	ctl := sandboxControl(t, rn.URL)
	cl := runtest.Client(t, rn)

	rec, res := inboxCarnetRun(t, srv, c)
	cn, err := cl.GetCarnet(ctx, res.Rows[0].CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	if want := srv.selfURL() + NotifyPath + tok; cn.NotificationURL == nil || *cn.NotificationURL != want {
		t.Fatalf("the carnet's notification_url is %v, want the desk's %s", cn.NotificationURL, want)
	}
	sheet, cents := crashCobvSheet(3)
	runPath := crashStartCobvRun(t, c, sheet, 3)
	var cobvID int64
	fmt.Sscanf(strings.TrimPrefix(runPath, "/execucoes/"), "%d", &cobvID)
	crec := waitRun(t, srv, cobvID, 90*time.Second)
	if crec.Status != "done" {
		t.Fatalf("cobv run ended %s: %s", crec.Status, crec.Message)
	}
	hook, err := cl.GetWebhook(ctx, "financeiro@example.com")
	if err != nil {
		t.Fatalf("the key's webhook: %v", err)
	}
	if want := srv.selfURL() + PixPath + tok; hook.WebhookURL != want {
		t.Fatalf("the key's webhook is %s, want the desk's %s", hook.WebhookURL, want)
	}
	cres, err := results.Load(filepath.Join(crec.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// the creation notifications settle
	before := waitInboxStats(t, srv, func(st listen.Stats) bool { return st.Pending == 0 }, "the creation notifications applied")
	carnetPage := fmt.Sprintf("/execucoes/%d", rec.ID)
	carnetBefore, cobvBefore := sitReceived(c.get(carnetPage).Body), sitReceived(c.get(runPath).Body)

	// unknown tokens: 404, logged without the token, nothing kept
	forged := strings.Repeat("A", tokenLen)
	form := "application/x-www-form-urlencoded"
	for _, p := range []string{NotifyPath + forged, PixPath + forged + "/pix", NotifyPath + "curto"} {
		if st := postDelivery(t, srv.URL, p, form, "notification="+res.Rows[0].Key); st != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", p, st)
		}
	}
	if !strings.Contains(logs.String(), "nenhuma conta tem") || strings.Contains(logs.String(), forged) {
		t.Errorf("the unknown address was not logged, or its token was:\n%s", logs.String())
	}
	if after, _ := srv.inbox.Stats(ctx); after.Deliveries != before.Deliveries {
		t.Errorf("deliveries to unknown tokens were kept: %+v -> %+v", before, after)
	}

	// the account's real endpoints, things the service never said
	if st := postDelivery(t, srv.URL, NotifyPath+tok, form, "notification=token-que-o-servico-nunca-deu"); st != http.StatusOK {
		t.Fatalf("forged token: %d, want 200 (kept, then checked)", st)
	}
	fakePix := fmt.Sprintf(`{"pix":[{"endToEndId":"E09089356202611281200FORJADO0001","txid":%q,"valor":"100.00","horario":"2026-11-28T12:00:00Z"}]}`, cres.Rows[0].Txid)
	if st := postDelivery(t, srv.URL, PixPath+tok+"/pix", "application/json", fakePix); st != http.StatusOK {
		t.Fatalf("forged Pix: %d, want 200", st)
	}
	// the inbox's River job reads them back from the service
	after := waitInboxStats(t, srv, func(st listen.Stats) bool { return st.Refused == 2 && st.Pending == 0 }, "the forgeries refused")
	if after.Changed != before.Changed || after.Applied != before.Applied {
		t.Errorf("forgeries changed the ledgers: %+v -> %+v", before, after)
	}
	refused, _ := srv.inbox.Items(ctx, listen.StateRefused)
	if len(refused) != 2 {
		t.Fatalf("refused items: %+v", refused)
	}
	for _, it := range refused {
		if it.Scope != accountScope(1) || it.LastError == "" {
			t.Errorf("refused item %+v: want the account's scope and why", it)
		}
	}
	for _, want := range []string{"token-que-o-servico-nunca-deu", "recusado", "o serviço não confirma o Pix E09089356202611281200FORJADO0001"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if strings.Contains(logs.String(), tok) {
		t.Error("the account's token reached the log")
	}
	if got := sitReceived(c.get(carnetPage).Body); got != carnetBefore {
		t.Errorf("the carnet run's page went from %q to %q received after forged notifications", carnetBefore, got)
	}
	if got := sitReceived(c.get(runPath).Body); got != cobvBefore {
		t.Errorf("the cobv run's page went from %q to %q received after a forged Pix", cobvBefore, got)
	}

	// real payments: the pages change by themselves
	if strings.Contains(c.get(carnetPage).Body, received(25000)) {
		t.Fatal("the run page shows R$ 250,00 received before anything was paid")
	}
	if _, err := ctl.PayParcel(ctx, res.Rows[0].CarnetID, 1, control.PayRequest{}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	row := cres.Rows[1]
	if _, err := ctl.PayPix(ctx, row.Txid, ""); err != nil {
		t.Fatal(err)
	}
	waitPage(t, c, carnetPage, received(25000), 60*time.Second)
	waitPage(t, c, runPath, received(cents[row.Key]), 60*time.Second)
	var presses int
	srv.db.QueryRow(`SELECT count(*) FROM audit WHERE action = 'situacao_atualizada'`).Scan(&presses)
	if presses != 0 {
		t.Errorf("%d presses of Atualizar situação; the pages changed by the notifications alone", presses)
	}
	waitInboxStats(t, srv, func(st listen.Stats) bool { return st.Pending == 0 }, "the inbox settled")
	if st, err := srv.inbox.ScopeStats(ctx, accountScope(1)); err != nil || st.Applied <= before.Applied || st.Refused != 2 {
		t.Errorf("the account's inbox: %+v %v, want more applied than %d and the 2 forgeries refused", st, err, before.Applied)
	}
}

// TestInboxLimits: a body over the cap is refused (413) and a rate over
// the account's (429); the unknown-token answers are rate-limited too;
// GET is no delivery.
func TestInboxLimits(t *testing.T) {
	ctx := context.Background()
	srv := startServerCfg(t, Config{SyncEvery: -1, NotifyRate: 2})
	tok := notifyToken(t, srv.db, 1)
	form := "application/x-www-form-urlencoded"
	// 20 posts at once, 2 a second allowed (burst 2): 2 kept, and one more
	// for each half second the posts took, the rest 429
	codes := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := postDelivery(t, srv.URL, NotifyPath+tok, form, fmt.Sprintf("notification=t%d", i))
			mu.Lock()
			codes[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	most := 2 + int(time.Since(start).Seconds()*2) + 1
	if codes[http.StatusOK] < 2 || codes[http.StatusOK] > most || codes[http.StatusOK]+codes[http.StatusTooManyRequests] != 20 {
		t.Errorf("20 posts at once with 2/s: %v, want 2 to %d kept and the rest 429", codes, most)
	}
	kept, _ := srv.inbox.Stats(ctx)
	if kept.Deliveries != codes[http.StatusOK] {
		t.Errorf("kept %d deliveries, answered 200 to %d", kept.Deliveries, codes[http.StatusOK])
	}
	time.Sleep(time.Second) // the limiter fills again (2 tokens; one more each 500 ms)

	big := "notification=" + strings.Repeat("x", notifyMaxBody)
	if st := postDelivery(t, srv.URL, NotifyPath+tok, form, big); st != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body: %d, want 413", len(big), st)
	}
	if st := postDelivery(t, srv.URL, NotifyPath+tok, form, "outra=coisa"); st != http.StatusBadRequest {
		t.Errorf("a body without notification: %d, want 400", st)
	}
	time.Sleep(600 * time.Millisecond)
	if st := postDelivery(t, srv.URL, PixPath+tok, "application/json", `{"pix":[{"endToEndId":`); st != http.StatusBadRequest {
		t.Errorf("a broken Pix webhook: %d, want 400", st)
	}
	if st, _ := srv.inbox.Stats(ctx); st.Deliveries != kept.Deliveries {
		t.Fatalf("refused bodies were kept: %+v, before them %+v", st, kept)
	}
	codes = map[int]int{}
	for i := 0; i < unknownBurst+5; i++ {
		codes[postDelivery(t, srv.URL, NotifyPath+strings.Repeat("b", tokenLen), form, "notification=x")]++
	}
	if codes[http.StatusNotFound] < unknownBurst || codes[http.StatusTooManyRequests] < 3 {
		t.Errorf("%d posts to an unknown token: %v, want %d 404 then 429", unknownBurst+5, codes, unknownBurst)
	}
	r, err := http.Get(srv.URL + NotifyPath + tok)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode == http.StatusOK {
		t.Errorf("GET of the endpoint: 200")
	}
}

// TestRedactPath: the log never gets an endpoint's token.
func TestRedactPath(t *testing.T) {
	tok := strings.Repeat("k", tokenLen)
	for _, c := range []struct{ in, want string }{
		{NotifyPath + tok, NotifyPath + "…" + tokenHint(tok)},
		{PixPath + tok + "/pix", PixPath + "…" + tokenHint(tok) + "/pix"},
		{"/execucoes/3", "/execucoes/3"},
	} {
		if got := redactPath(c.in); got != c.want || strings.Contains(got, tok) {
			t.Errorf("redactPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if !validToken(newNotifyToken()) || validToken(tok[1:]) || validToken(strings.Repeat("+", tokenLen)) {
		t.Error("validToken accepts a wrong shape or refuses a new token")
	}
}
