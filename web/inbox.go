package web

// The desk receives the service's notifications and Pix webhooks itself,
// without a separate `remessa listen`: each service account has a random
// token, and POST /notificacoes/<token> (the charges API's notification,
// notification=<token>) and POST /pix/<token> (a Pix webhook; the service
// appends /pix, so /pix/<token>/pix too) are its endpoints, outside the
// session (no cookie, no CSRF: the service posts them). What they receive
// is trusted for nothing: pipeline/listen keeps it in its durable inbox
// (execucoes/listen.db, scoped to the account) before the 200, and the
// desk's River job (InboxArgs) has it applied by the same library, which
// reads each notification back from the account's own service before it
// changes a ledger. The desk re-implements none of it.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/time/rate"

	"remessa/internal/metrics"
	"remessa/internal/migrate"
	"remessa/pipeline/listen"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// Paths of the notification endpoints; the account's token follows.
const (
	NotifyPath = "/notificacoes/"
	PixPath    = "/pix/"
)

// notifyMaxBody is the largest delivery the endpoints read: a
// notification is a token, a Pix webhook a few Pix (about 300 bytes each).
const notifyMaxBody = 64 << 10

// DefaultNotifyRate is how many deliveries a second one account's
// endpoints take by default (Config.NotifyRate); more are answered 429,
// which the service posts again later.
const DefaultNotifyRate = 2000

// unknownRate bounds the answers (and log lines) to tokens no account has.
const unknownRate, unknownBurst = 5, 20

// InboxEvery is how often the desk works its inbox when no delivery asks
// it to: the retries that came due, and the orphans of a run that has
// finished since.
const InboxEvery = 30 * time.Second

const inboxQueue = "notificacoes"

// tokenLen is the length of an account's token (32 random bytes, base64url).
const tokenLen = 43

// notifyTokensStep is web.db's step 3 (in Schema's list, db.go).
var notifyTokensStep = migrate.Step{Name: "endereços de notificação das contas", Tx: addNotifyTokens}

// addNotifyTokens is the web.db step that gives every account its token
// of the notification endpoints.
func addNotifyTokens(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE accounts ADD COLUMN notify_token TEXT NOT NULL DEFAULT ''`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id FROM accounts`)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET notify_token = ? WHERE id = ?`, newNotifyToken(), id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `CREATE UNIQUE INDEX accounts_notify_token ON accounts(notify_token) WHERE notify_token <> ''`)
	return err
}

// newNotifyToken is a new account's token: 256 random bits.
func newNotifyToken() string { return randomToken(32) }

// validToken reports whether tok has the shape of a token (so junk never
// reaches the database).
func validToken(tok string) bool {
	if len(tok) != tokenLen {
		return false
	}
	for _, c := range tok {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// tokenHint names a token in the log without giving it away: the first
// 8 hex digits of its SHA-256.
func tokenHint(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:4])
}

// accountScope is the inbox scope of an account.
func accountScope(id int64) string { return "conta-" + strconv.FormatInt(id, 10) }

// accountByNotifyToken returns the account whose token is tok, 0 when
// none. The tokens are kept in memory (every delivery looks one up); a
// token not there reloads them from web.db, at most once a second, so an
// account created meanwhile is found and a flood of unknown tokens costs
// no more than that.
func (s *Server) accountByNotifyToken(ctx context.Context, tok string) (int64, error) {
	if !validToken(tok) {
		return 0, nil
	}
	t := &s.tokens
	t.mu.RLock()
	id := t.ids[tok]
	t.mu.RUnlock()
	if id != 0 {
		return id, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.loaded) < time.Second {
		return t.ids[tok], nil
	}
	if err := s.loadTokensLocked(ctx); err != nil {
		return 0, err
	}
	return t.ids[tok], nil
}

// tokenCache holds the accounts' tokens.
type tokenCache struct {
	mu     sync.RWMutex
	ids    map[string]int64
	loaded time.Time
}

// loadTokens reads every account's token from web.db.
func (s *Server) loadTokens(ctx context.Context) error {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	return s.loadTokensLocked(ctx)
}

func (s *Server) loadTokensLocked(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, notify_token FROM accounts WHERE notify_token <> ''`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ids := map[string]int64{}
	for rows.Next() {
		var id int64
		var tok string
		if err := rows.Scan(&id, &tok); err != nil {
			return err
		}
		ids[tok] = id
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.tokens.ids, s.tokens.loaded = ids, time.Now()
	return nil
}

// notifyLimits are the endpoints' rate limits: one per account, and one
// for tokens no account has.
type notifyLimits struct {
	mu        sync.Mutex
	perSecond float64
	accounts  map[int64]*rate.Limiter
	unknown   *rate.Limiter
}

func newNotifyLimits(perSecond float64) *notifyLimits {
	return &notifyLimits{perSecond: perSecond, accounts: map[int64]*rate.Limiter{},
		unknown: rate.NewLimiter(unknownRate, unknownBurst)}
}

func (n *notifyLimits) allow(account int64) bool {
	n.mu.Lock()
	lim := n.accounts[account]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(n.perSecond), max(1, int(n.perSecond)))
		n.accounts[account] = lim
	}
	n.mu.Unlock()
	return lim.Allow()
}

// mountInbox registers the endpoints (outside guard: the service has no
// session).
func (s *Server) mountInbox(m *http.ServeMux) {
	m.HandleFunc("POST "+NotifyPath+"{token}", func(w http.ResponseWriter, r *http.Request) { s.receive(w, r, false) })
	m.HandleFunc("POST "+PixPath+"{token}", func(w http.ResponseWriter, r *http.Request) { s.receive(w, r, true) })
	m.HandleFunc("POST "+PixPath+"{token}/pix", func(w http.ResponseWriter, r *http.Request) { s.receive(w, r, true) })
}

// receive is one delivery to an account's endpoint: an unknown token is
// refused (404, logged without the token), a rate over the account's is
// refused (429), and anything else goes to the inbox, which answers.
func (s *Server) receive(w http.ResponseWriter, r *http.Request, pix bool) {
	ctx := r.Context()
	log := logOf(ctx, s.log)
	tok := r.PathValue("token")
	acc, err := s.accountByNotifyToken(ctx, tok)
	if err != nil {
		metrics.NotificationRefused("unavailable")
		log.Error().Err(err).Msg("notificação: procurar a conta")
		http.Error(w, "indisponível; envie de novo", http.StatusServiceUnavailable)
		return
	}
	kind := "notificacao"
	if pix {
		kind = "pix"
	}
	if acc == 0 {
		metrics.NotificationRefused("unknown_address")
		if !s.notify.unknown.Allow() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "muitas entregas", http.StatusTooManyRequests)
			return
		}
		log.Warn().Str("tipo", kind).Str("ip", clientIP(r)).Str("token_sha256", tokenHint(tok)).
			Msg("notificação para um endereço que nenhuma conta tem; nada foi guardado")
		http.Error(w, "endereço desconhecido", http.StatusNotFound)
		return
	}
	if !s.notify.allow(acc) {
		metrics.NotificationRefused("rate")
		w.Header().Set("Retry-After", "1")
		http.Error(w, "muitas entregas; envie de novo em um segundo", http.StatusTooManyRequests)
		return
	}
	n, st := s.inbox.Receive(w, r, listen.Delivery{Scope: accountScope(acc), Path: fmt.Sprintf("/conta/%d/%s", acc, kind), Pix: pix})
	switch st {
	case http.StatusOK:
		if n > 0 {
			s.kickInbox()
		}
	case http.StatusRequestEntityTooLarge:
		metrics.NotificationRefused("too_large")
		log.Warn().Str("tipo", kind).Int64("conta", acc).Str("ip", clientIP(r)).Msg("notificação recusada: corpo grande demais")
	case http.StatusBadRequest, http.StatusMethodNotAllowed:
		metrics.NotificationRefused("bad_request")
		log.Warn().Str("tipo", kind).Int64("conta", acc).Str("ip", clientIP(r)).Msg("notificação recusada: corpo ilegível")
	default:
		metrics.NotificationRefused("unavailable")
	}
}

// InboxArgs is the River job that applies the inbox: queued when a
// delivery is kept (at most one waiting at a time) and when the server
// starts, and by the periodic tick (Tick true, every InboxEvery; one per
// period, so a tick left running by a killed process blocks none after
// it).
type InboxArgs struct {
	Tick bool `json:"tick,omitempty"`
}

// Kind is River's name for the job.
func (InboxArgs) Kind() string { return "remessa_caixa_de_entrada" }

// InsertOpts: its own queue, one at a time (pipeline/listen drains one at
// a time anyway).
func (a InboxArgs) InsertOpts() river.InsertOpts {
	o := river.InsertOpts{Queue: inboxQueue, MaxAttempts: 3}
	if a.Tick {
		o.UniqueOpts = river.UniqueOpts{ByArgs: true, ByPeriod: InboxEvery}
	}
	return o
}

type inboxWorker struct {
	river.WorkerDefaults[InboxArgs]
	s *Server
}

// Timeout: a drain that waits on a slow service still ends.
func (w *inboxWorker) Timeout(*river.Job[InboxArgs]) time.Duration { return 10 * time.Minute }

func (w *inboxWorker) Work(ctx context.Context, job *river.Job[InboxArgs]) error {
	if !job.Args.Tick {
		// a burst of deliveries (the service posts a batch's payments
		// together) is one drain: the deliveries of this second find the
		// job queued and add none
		select {
		case <-time.After(inboxSettle):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	_, err := w.s.workInbox(ctx)
	return err
}

// inboxSettle is how long a queued inbox job waits for more deliveries
// before it drains (and writes each changed run's reconciliation once).
const inboxSettle = time.Second

// addInboxWorkers registers the inbox job, its queue and its tick.
func (s *Server) addInboxWorkers(workers *river.Workers, cfg *river.Config) error {
	if err := river.AddWorkerSafely(workers, &inboxWorker{s: s}); err != nil {
		return err
	}
	cfg.Queues[inboxQueue] = river.QueueConfig{MaxWorkers: 1}
	cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(InboxEvery),
		func() (river.JobArgs, *river.InsertOpts) { return InboxArgs{Tick: true}, nil },
		&river.PeriodicJobOpts{ID: "caixa_de_entrada", RunOnStart: true}))
	return nil
}

// kickInbox queues the inbox job unless one is queued and not started
// yet (it will see what was kept before it starts).
func (s *Server) kickInbox() {
	if s.river == nil || !s.inboxKicked.CompareAndSwap(false, true) {
		return
	}
	if _, err := s.river.Insert(context.Background(), InboxArgs{}, nil); err != nil {
		s.inboxKicked.Store(false)
		s.log.Error().Err(err).Msg("caixa de entrada: enfileirar")
	}
}

// workInbox applies what the inbox holds (pipeline/listen: read back from
// each account's service, applied to the runs' ledgers), then writes the
// reconciliation of every run whose ledger changed, so its page shows it.
func (s *Server) workInbox(ctx context.Context) (listen.Drained, error) {
	s.inboxKicked.Store(false)
	if _, err := s.inbox.Rescan(ctx); err != nil {
		return listen.Drained{}, err
	}
	d, err := s.inbox.Drain(ctx)
	for _, name := range d.Runs {
		s.inboxChanged(context.WithoutCancel(ctx), name)
	}
	return d, err
}

// inboxChanged writes the reconciliation of the run in folder name as of
// its service's day, and tells its page's watchers.
func (s *Server) inboxChanged(ctx context.Context, name string) {
	rec, err := s.loadRunByRunID(ctx, name)
	if err != nil {
		s.log.Error().Err(err).Str("run_id", name).Msg("caixa de entrada: execução")
		return
	}
	today := rules.Today(status.ServiceNow(ctx, rec.Dir, s.now()))
	if _, _, err := conciliacao.WriteRun(ctx, rec.Dir, today, "pt"); err != nil {
		s.log.Error().Err(err).Int64("execucao", rec.ID).Msg("caixa de entrada: conciliação")
		return
	}
	s.publishRun(ctx, rec.ID)
}

// loadRunByRunID loads the run whose folder is execucoes/<runID>.
func (s *Server) loadRunByRunID(ctx context.Context, runID string) (*runRecord, error) {
	var id int64
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM runs WHERE run_id = ?`, runID).Scan(&id); err != nil {
		return nil, fmt.Errorf("execução %s: %w", runID, err)
	}
	return s.loadRun(ctx, id)
}

// deskScopes places each run folder in its account's scope and reaches
// the account's service as the run's own jobs do (runOptions: the shared
// embedded sandbox, or the account's sealed credentials).
type deskScopes struct{ s *Server }

func (d deskScopes) ScopeOf(ctx context.Context, name string) (string, error) {
	var acc int64
	err := d.s.db.QueryRowContext(ctx, `SELECT account_id FROM runs WHERE run_id = ?`, name).Scan(&acc)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return accountScope(acc), nil
}

func (d deskScopes) Connect(ctx context.Context, name string) (*run.Service, error) {
	rec, err := d.s.loadRunByRunID(ctx, name)
	if err != nil {
		return nil, err
	}
	ro, cleanup, err := d.s.runOptions(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ro.Observe = nil
	svc, _, err := run.Connect(ctx, rec.Dir, ro)
	return svc, err
}

// openInbox opens the desk's inbox: pipeline/listen's listen.db in the
// runs folder, scoped by account.
func (s *Server) openInbox(ctx context.Context) error {
	l, err := listen.Open(ctx, listen.Options{RunsDir: s.runsDir(), Scopes: deskScopes{s}, MaxBody: notifyMaxBody, Now: s.cfg.Now,
		Logf: func(format string, args ...any) { s.log.Info().Msg(fmt.Sprintf(format, args...)) }})
	if err != nil {
		return fmt.Errorf("caixa de entrada das notificações: %w", err)
	}
	s.inbox = l
	s.notify = newNotifyLimits(s.cfg.NotifyRate)
	if err := s.loadTokens(ctx); err != nil {
		return fmt.Errorf("caixa de entrada das notificações: %w", err)
	}
	return nil
}

// selfURL is the desk's own address as the embedded sandbox reaches it:
// the address it listens on, on loopback when it listens on all
// interfaces; "" before Start.
func (s *Server) selfURL() string {
	if p := s.self.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *Server) setSelfURL(ln net.Listener, scheme string) {
	host, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	u := scheme + "://" + net.JoinHostPort(host, port)
	s.self.Store(&u)
}

// notifyURLs are the addresses of an account's endpoints, on base (its
// scheme and host, without a trailing slash).
func notifyURLs(base, token string) (notif, pix string) {
	base = strings.TrimRight(base, "/")
	return base + NotifyPath + token, base + PixPath + token
}

// notifyBase is where the service reaches the desk for acc's runs: the
// desk's own loopback address for the embedded account, --public-url for
// the others ("" when not configured: the account page shows the URL to
// register by hand).
func (s *Server) notifyBase(acc *Account) string {
	if acc.Service == "embedded" {
		return s.selfURL()
	}
	return s.cfg.PublicURL
}

// notifyViewOf is the account page's block on its endpoints: the
// addresses to register, and what the inbox kept for it.
func (s *Server) notifyViewOf(r *http.Request, id int64, service string) *notifyView {
	ctx := r.Context()
	var tok string
	if err := s.db.QueryRowContext(ctx, `SELECT notify_token FROM accounts WHERE id = ?`, id).Scan(&tok); err != nil || tok == "" {
		return nil
	}
	v := &notifyView{Embedded: service == "embedded", Public: s.cfg.PublicURL != ""}
	base := s.cfg.PublicURL
	switch {
	case v.Embedded:
		base = s.selfURL()
	case base == "":
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	v.NotifURL, v.PixURL = notifyURLs(base, tok)
	if st, err := s.inbox.ScopeStats(ctx, accountScope(id)); err == nil {
		v.Received, v.Pending, v.Refused = st.Deliveries, st.Pending, st.Refused
		if st.LastAt != "" {
			if t, err := time.Parse(time.RFC3339Nano, st.LastAt); err == nil {
				v.LastAt = t.In(rules.SaoPaulo).Format("02/01/2006 15:04")
			}
		}
	}
	return v
}

// redactPath is a request's path as the log may show it: the token of a
// notification endpoint replaced by its hint.
func redactPath(p string) string {
	for _, pre := range []string{NotifyPath, PixPath} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			tok, tail, _ := strings.Cut(rest, "/")
			if tail != "" {
				tail = "/" + tail
			}
			return pre + "…" + tokenHint(tok) + tail
		}
	}
	return p
}
