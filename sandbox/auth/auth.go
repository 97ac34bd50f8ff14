// Package auth holds the sandbox's accounts and applications and issues and
// checks their tokens: POST /v1/authorize for the charges API and POST
// /oauth/token for the Pix API, both with HTTP Basic client credentials.
//
// Secrets are stored as sha256(salt || secret) with a per-application salt
// and compared in constant time. Tokens are HS256 JWTs signed with a key
// kept in the store, so they stay valid across restarts until they expire
// on the sandbox clock.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// Store kinds used by this package.
const (
	KindAccount = "auth.account"
	KindApp     = "auth.app"
	KindMeta    = "auth.meta"
)

// Default token lifetimes.
const (
	DefaultTokenTTL    = 600 * time.Second  // POST /v1/authorize
	DefaultPixTokenTTL = 3600 * time.Second // POST /oauth/token
)

// AllPixScopes are the scopes a new application gets: every scope of the
// spec plus the read/write companions real clients use.
var AllPixScopes = []string{
	"cob.write", "cob.read", "cobv.write", "cobv.read", "lotecobv.write", "lotecobv.read",
	"pix.write", "pix.read", "pix.send", "gn.pix.send.read",
	"webhook.write", "webhook.read", "gn.split.write", "gn.split.read",
	"gn.pix.evp.write", "gn.pix.evp.read", "gn.balance.read",
	"payloadlocation.write", "payloadlocation.read", "gn.settings.write", "gn.settings.read",
	"gn.qrcodes.read", "gn.qrcodes.pay", "gn.reports.write", "gn.reports.read",
}

// Account is a sandbox account: the owner of charges and Pix objects.
type Account struct {
	ID        string    `json:"id"`         // internal id, the "account" of every stored document
	PayeeCode string    `json:"payee_code"` // 32 hex, charges API identifier (marketplace repasses)
	Conta     string    `json:"conta"`      // Pix account number (Pix split)
	CNPJ      string    `json:"cnpj"`       // formatted, e.g. "12.345.678/0001-95"
	Name      string    `json:"name"`
	Keys      []string  `json:"keys"` // Pix keys; the first is the EVP created with the account
	CreatedAt time.Time `json:"created_at"`
}

// App is an application of an account. Its secret is only kept hashed.
type App struct {
	ClientID   string    `json:"client_id"`
	AccountID  string    `json:"account_id"`
	Scopes     []string  `json:"scopes"`
	Salt       string    `json:"salt"`
	SecretHash string    `json:"secret_hash"`
	CreatedAt  time.Time `json:"created_at"`
}

// AppInfo is an application without its secret hash (for listings).
type AppInfo struct {
	ClientID  string    `json:"client_id"`
	AccountID string    `json:"account_id"`
	Scopes    []string  `json:"scopes"`
	CreatedAt time.Time `json:"created_at"`
}

// Principal is who a request acts for; modules filter every read and write
// by AccountID, so an application never sees another account's data. The
// value is shared between requests: treat it (and its slices) as read-only.
type Principal struct {
	AccountID string
	AppID     string // the client_id
	PayeeCode string
	Conta     string
	CNPJ      string
	Name      string
	Keys      []string
	Scopes    []string
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p (the middlewares do this; tests of
// handlers may too).
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal the auth middleware put in ctx.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(*Principal)
	return p, ok && p != nil
}

// Options configure a Service.
type Options struct {
	Clock    clock.Clock    // default clock.Real{}
	TokenTTL time.Duration  // charges token lifetime, default 600 s; also caps the Pix token (3600 s)
	Logger   zerolog.Logger // default: disabled
}

// Service keeps accounts and applications in memory, writing through to
// the store. It is safe for concurrent use.
type Service struct {
	st     *store.Store
	clk    clock.Clock
	v1TTL  time.Duration
	pixTTL time.Duration
	key    []byte
	log    zerolog.Logger

	mu       sync.RWMutex
	accounts map[string]*Account // by ID
	apps     map[string]*App     // by client_id
	byPayee  map[string]*Account
	byConta  map[string]*Account
	byKey    map[string]*Account   // normalised key -> account
	pcache   map[string]*Principal // by client_id; cleared on every change

	vmu    sync.Mutex
	vcache map[string]verified // token -> checked claims

	rmu    sync.Mutex // one reload at a time (shared store)
	loaded time.Time  // last load from the store
}

// New loads accounts, applications and the token key from st (creating
// the key on first use).
func New(ctx context.Context, st *store.Store, opts Options) (*Service, error) {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	s := &Service{
		st: st, clk: opts.Clock, log: opts.Logger,
		v1TTL: DefaultTokenTTL, pixTTL: DefaultPixTokenTTL,
		accounts: map[string]*Account{}, apps: map[string]*App{},
		byPayee: map[string]*Account{}, byConta: map[string]*Account{}, byKey: map[string]*Account{},
		pcache: map[string]*Principal{}, vcache: map[string]verified{},
	}
	if opts.TokenTTL > 0 {
		s.v1TTL = opts.TokenTTL
		s.pixTTL = min(opts.TokenTTL, DefaultPixTokenTTL)
	}
	var meta struct {
		Key string `json:"token_key"`
	}
	found, err := st.Get(ctx, KindMeta, "", "token-key", &meta)
	if err != nil {
		return nil, fmt.Errorf("auth: load token key: %w", err)
	}
	if found {
		s.key, err = hex.DecodeString(meta.Key)
		if err != nil || len(s.key) < 32 {
			return nil, fmt.Errorf("auth: stored token key is corrupt")
		}
	} else {
		// Read again inside the write transaction: another instance over
		// the same database may have made the key meanwhile, and every
		// instance must sign with the same one.
		err := st.Tx(ctx, func(tx *store.Tx) error {
			found, err := tx.Get(KindMeta, "", "token-key", &meta)
			if err != nil || found {
				return err
			}
			meta.Key = hex.EncodeToString(randomBytes(32))
			return tx.Put(KindMeta, "", "token-key", meta)
		})
		if err != nil {
			return nil, fmt.Errorf("auth: save token key: %w", err)
		}
		s.key, err = hex.DecodeString(meta.Key)
		if err != nil || len(s.key) < 32 {
			return nil, fmt.Errorf("auth: stored token key is corrupt")
		}
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads every account and application from the store, replacing what
// the service held.
func (s *Service) load(ctx context.Context) error {
	accounts, apps := map[string]*Account{}, map[string]*App{}
	err := s.st.Each(ctx, KindAccount, func(_, id string, raw []byte) error {
		var a Account
		if err := jsonUnmarshal(raw, &a); err != nil {
			return fmt.Errorf("auth: decode account %s: %w", id, err)
		}
		accounts[a.ID] = &a
		return nil
	})
	if err != nil {
		return err
	}
	err = s.st.Each(ctx, KindApp, func(_, id string, raw []byte) error {
		var a App
		if err := jsonUnmarshal(raw, &a); err != nil {
			return fmt.Errorf("auth: decode application %s: %w", id, err)
		}
		apps[a.ClientID] = &a
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accounts, s.apps = map[string]*Account{}, apps
	s.byPayee, s.byConta, s.byKey = map[string]*Account{}, map[string]*Account{}, map[string]*Account{}
	for _, a := range accounts {
		s.indexAccount(a)
	}
	clear(s.pcache)
	s.loaded = time.Now()
	return nil
}

// refreshEvery bounds how stale the accounts and applications of an
// instance sharing its database with others may be.
const refreshEvery = time.Second

// refresh reloads the accounts and applications when other instances may
// have changed them (a shared store): after refreshEvery, or at once after
// a miss (an account or application created on another instance). It
// reports whether it reloaded. On a store of its own the service is the
// only writer and never reloads.
func (s *Service) refresh(miss bool) bool {
	if !s.st.Shared() {
		return false
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.mu.RLock()
	age := time.Since(s.loaded)
	s.mu.RUnlock()
	if !miss && age < refreshEvery {
		return false
	}
	if miss && age < 5*time.Millisecond {
		return true // a concurrent miss just reloaded
	}
	if err := s.load(context.Background()); err != nil {
		s.log.Error().Err(err).Msg("auth: reload accounts and applications")
		return false
	}
	return true
}

// appByID returns application clientID (reloading on a miss when the
// store is shared).
func (s *Service) appByID(clientID string) (*App, bool) {
	s.refresh(false)
	s.mu.RLock()
	app, ok := s.apps[clientID]
	s.mu.RUnlock()
	if !ok && s.refresh(true) {
		s.mu.RLock()
		app, ok = s.apps[clientID]
		s.mu.RUnlock()
	}
	return app, ok
}

// TokenTTL returns the lifetime of charges API tokens.
func (s *Service) TokenTTL() time.Duration { return s.v1TTL }

// PixTokenTTL returns the lifetime of Pix API tokens.
func (s *Service) PixTokenTTL() time.Duration { return s.pixTTL }

func (s *Service) indexAccount(a *Account) {
	clear(s.pcache)
	if old, ok := s.accounts[a.ID]; ok {
		for _, k := range old.Keys {
			delete(s.byKey, NormalizeKey(k))
		}
	}
	s.accounts[a.ID] = a
	s.byPayee[strings.ToLower(a.PayeeCode)] = a
	s.byConta[a.Conta] = a
	for _, k := range a.Keys {
		s.byKey[NormalizeKey(k)] = a
	}
}

// NormalizeKey is the form keys are indexed by: emails and EVPs lowercase,
// spaces, dots, dashes, slashes and parentheses removed from documents and
// phones (a leading + is kept).
func NormalizeKey(k string) string {
	k = strings.TrimSpace(k)
	if strings.Contains(k, "@") || strings.Count(k, "-") == 4 && len(k) == 36 {
		return strings.ToLower(k)
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '/', '(', ')':
			return -1
		}
		return r
	}, strings.ToUpper(k))
}

// Credentials describe an application and its account, for printing. The
// secret is only known when the application was just created (or given).
type Credentials struct {
	AccountID    string `json:"account_id"`
	PayeeCode    string `json:"payee_code"`
	Conta        string `json:"conta"`
	CNPJ         string `json:"cnpj"`
	Name         string `json:"name"`
	PixKey       string `json:"pix_key"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	Created      bool   `json:"created"` // the application was created now
}

// Bootstrap makes sure the first account and application exist. On an
// empty store it creates them (with clientID/secret when given, random
// otherwise) and returns Created=true with the secret. With clientID given
// on a populated store it makes that application exist with that secret
// (creating it in the first account, or updating its secret), so fixed
// credentials are idempotent across restarts. Without clientID it returns
// the first application of the first account (no secret).
func (s *Service) Bootstrap(ctx context.Context, clientID, secret string) (Credentials, error) {
	if clientID == "" && secret != "" {
		return Credentials{}, errors.New("auth: a client secret was given without a client id")
	}
	accs := s.Accounts()
	if len(accs) == 0 {
		acc, err := s.CreateAccount(ctx, "")
		if err != nil {
			return Credentials{}, err
		}
		id, sec, err := s.CreateApp(ctx, acc.ID, clientID, secret, nil)
		if err != nil {
			return Credentials{}, err
		}
		return s.credentials(acc.ID, id, sec, true), nil
	}
	first := accs[0]
	if clientID == "" {
		for _, a := range s.Apps() {
			if a.AccountID == first.ID {
				return s.credentials(first.ID, a.ClientID, "", false), nil
			}
		}
		id, sec, err := s.CreateApp(ctx, first.ID, "", "", nil)
		if err != nil {
			return Credentials{}, err
		}
		return s.credentials(first.ID, id, sec, true), nil
	}
	app, ok := s.appByID(clientID)
	if !ok {
		id, sec, err := s.CreateApp(ctx, first.ID, clientID, secret, nil)
		if err != nil {
			return Credentials{}, err
		}
		return s.credentials(first.ID, id, sec, true), nil
	}
	if secret != "" && !checkSecret(app, secret) {
		if err := s.SetSecret(ctx, clientID, secret); err != nil {
			return Credentials{}, err
		}
		s.log.Warn().Str("client_id", clientID).Msg("client secret replaced by the one given at start")
	}
	return s.credentials(app.AccountID, clientID, secret, false), nil
}

func (s *Service) credentials(accountID, clientID, secret string, created bool) Credentials {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.accounts[accountID]
	c := Credentials{AccountID: a.ID, PayeeCode: a.PayeeCode, Conta: a.Conta, CNPJ: a.CNPJ, Name: a.Name,
		ClientID: clientID, ClientSecret: secret, Created: created}
	if len(a.Keys) > 0 {
		c.PixKey = a.Keys[0]
	}
	return c
}

// CreateAccount creates an account with a random payee code, conta, CNPJ
// and one random EVP Pix key. An empty name gives "Conta Sandbox N".
func (s *Service) CreateAccount(ctx context.Context, name string) (Account, error) {
	return s.createAccount(ctx, name, "")
}

// EnsureAccount returns the account with Pix account number conta,
// creating it (as CreateAccount, with that conta) when there is none: a
// local run whose Pix split names receiving accounts finds them.
func (s *Service) EnsureAccount(ctx context.Context, name, conta string) (Account, error) {
	if conta == "" || strings.ContainsAny(conta, " \t\r\n") {
		return Account{}, fmt.Errorf("auth: invalid conta %q", conta)
	}
	if a, ok := s.AccountByConta(conta); ok {
		return a, nil
	}
	return s.createAccount(ctx, name, conta)
}

func (s *Service) createAccount(ctx context.Context, name, conta string) (Account, error) {
	var acc Account
	// Never take s.mu inside a store transaction (updateAccount takes them
	// in the other order).
	s.mu.RLock()
	fixed := conta != ""
	payee := hex.EncodeToString(randomBytes(16))
	if !fixed {
		conta = randomConta()
	}
	for s.byPayee[payee] != nil || !fixed && s.byConta[conta] != nil {
		payee = hex.EncodeToString(randomBytes(16))
		if !fixed {
			conta = randomConta()
		}
	}
	taken := fixed && s.byConta[conta] != nil
	s.mu.RUnlock()
	if taken {
		return Account{}, fmt.Errorf("auth: conta %q already exists", conta)
	}
	err := s.st.Tx(ctx, func(tx *store.Tx) error {
		n, err := tx.NextSeq("auth.account")
		if err != nil {
			return err
		}
		if name == "" {
			name = fmt.Sprintf("Conta Sandbox %d LTDA", n)
		}
		acc = Account{
			ID: fmt.Sprintf("acc%06d", n), PayeeCode: payee, Conta: conta, CNPJ: randomCNPJ(), Name: name,
			Keys: []string{NewEVP()}, CreatedAt: s.clk.Now().UTC(),
		}
		return tx.Put(KindAccount, acc.ID, acc.ID, acc)
	})
	if err != nil {
		return Account{}, fmt.Errorf("auth: create account: %w", err)
	}
	s.mu.Lock()
	s.indexAccount(&acc)
	s.mu.Unlock()
	return copyAccount(&acc), nil
}

// CreateApp creates an application in account accountID. Empty clientID or
// secret are generated ("Client_Id_<40 hex>", "Client_Secret_<40 hex>");
// nil scopes means AllPixScopes. It returns the credentials, the only time
// the secret is available.
func (s *Service) CreateApp(ctx context.Context, accountID, clientID, secret string, scopes []string) (string, string, error) {
	_, accOK := s.Account(accountID)
	_, dup := s.appByID(clientID)
	if !accOK {
		return "", "", fmt.Errorf("auth: account %q does not exist", accountID)
	}
	if dup {
		return "", "", fmt.Errorf("auth: client id %q already exists", clientID)
	}
	if clientID == "" {
		clientID = "Client_Id_" + hex.EncodeToString(randomBytes(20))
	}
	if strings.ContainsAny(clientID, ": \t\r\n") {
		return "", "", fmt.Errorf("auth: client id %q must not contain ':' or spaces", clientID)
	}
	if secret == "" {
		secret = "Client_Secret_" + hex.EncodeToString(randomBytes(20))
	}
	if scopes == nil {
		scopes = slices.Clone(AllPixScopes)
	}
	salt := hex.EncodeToString(randomBytes(16))
	app := App{ClientID: clientID, AccountID: accountID, Scopes: scopes, Salt: salt,
		SecretHash: hashSecret(salt, secret), CreatedAt: s.clk.Now().UTC()}
	if err := s.st.Tx(ctx, func(tx *store.Tx) error { return tx.Put(KindApp, accountID, clientID, app) }); err != nil {
		return "", "", fmt.Errorf("auth: create application: %w", err)
	}
	s.mu.Lock()
	s.apps[clientID] = &app
	clear(s.pcache)
	s.mu.Unlock()
	return clientID, secret, nil
}

// SetSecret replaces the secret of application clientID.
func (s *Service) SetSecret(ctx context.Context, clientID, secret string) error {
	app, ok := s.appByID(clientID)
	if !ok {
		return fmt.Errorf("auth: application %q does not exist", clientID)
	}
	if secret == "" {
		return errors.New("auth: empty client secret")
	}
	n := *app
	n.Salt = hex.EncodeToString(randomBytes(16))
	n.SecretHash = hashSecret(n.Salt, secret)
	if err := s.st.Tx(ctx, func(tx *store.Tx) error { return tx.Put(KindApp, n.AccountID, n.ClientID, n) }); err != nil {
		return fmt.Errorf("auth: save application: %w", err)
	}
	s.mu.Lock()
	s.apps[clientID] = &n
	clear(s.pcache)
	s.mu.Unlock()
	return nil
}

// AddKey adds a Pix key to an account (e.g. POST /v2/gn/evp). Adding a key
// that belongs to another account fails.
func (s *Service) AddKey(ctx context.Context, accountID, key string) error {
	return s.updateAccount(ctx, accountID, func(a *Account) error {
		if owner, ok := s.byKey[NormalizeKey(key)]; ok {
			if owner.ID == a.ID {
				return nil
			}
			return fmt.Errorf("auth: Pix key %q belongs to another account", key)
		}
		a.Keys = append(a.Keys, key)
		return nil
	})
}

// RemoveKey removes a Pix key from an account; removing a key the account
// does not have fails.
func (s *Service) RemoveKey(ctx context.Context, accountID, key string) error {
	return s.updateAccount(ctx, accountID, func(a *Account) error {
		nk := NormalizeKey(key)
		i := slices.IndexFunc(a.Keys, func(k string) bool { return NormalizeKey(k) == nk })
		if i < 0 {
			return fmt.Errorf("auth: account %s has no Pix key %q", accountID, key)
		}
		a.Keys = slices.Delete(a.Keys, i, i+1)
		return nil
	})
}

func (s *Service) updateAccount(ctx context.Context, accountID string, fn func(a *Account) error) error {
	// Hold the write lock across the transaction so concurrent key changes
	// are serialised and the index stays consistent with the store.
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.accounts[accountID]
	if !ok {
		return fmt.Errorf("auth: account %q does not exist", accountID)
	}
	n := copyAccount(cur)
	if err := fn(&n); err != nil {
		return err
	}
	if err := s.st.Tx(ctx, func(tx *store.Tx) error { return tx.Put(KindAccount, n.ID, n.ID, n) }); err != nil {
		return fmt.Errorf("auth: save account %s: %w", accountID, err)
	}
	s.indexAccount(&n)
	return nil
}

func copyAccount(a *Account) Account {
	c := *a
	c.Keys = slices.Clone(a.Keys)
	return c
}

// Accounts lists the accounts in creation order.
func (s *Service) Accounts() []Account {
	s.refresh(false)
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Account, 0, len(s.accounts))
	for _, a := range s.accounts {
		out = append(out, copyAccount(a))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Apps lists the applications (without secrets), by account then creation.
func (s *Service) Apps() []AppInfo {
	s.refresh(false)
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]AppInfo, 0, len(s.apps))
	for _, a := range s.apps {
		out = append(out, AppInfo{ClientID: a.ClientID, AccountID: a.AccountID, Scopes: slices.Clone(a.Scopes), CreatedAt: a.CreatedAt})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].AccountID != out[j].AccountID {
			return out[i].AccountID < out[j].AccountID
		}
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ClientID < out[j].ClientID
	})
	return out
}

// findAccount runs get under the read lock, reloading the accounts once on
// a miss when the store is shared (another instance may have made it).
func (s *Service) findAccount(get func() (*Account, bool)) (Account, bool) {
	s.refresh(false)
	for _, miss := range []bool{false, true} {
		s.mu.RLock()
		a, ok := get()
		s.mu.RUnlock()
		if ok {
			return copyAccount(a), true
		}
		if !miss && !s.refresh(true) {
			break
		}
	}
	return Account{}, false
}

// Account returns the account with internal id id.
func (s *Service) Account(id string) (Account, bool) {
	return s.findAccount(func() (*Account, bool) { a, ok := s.accounts[id]; return a, ok })
}

// AccountByPayeeCode finds an account by payee code (case-insensitive).
func (s *Service) AccountByPayeeCode(code string) (Account, bool) {
	code = strings.ToLower(code)
	return s.findAccount(func() (*Account, bool) { a, ok := s.byPayee[code]; return a, ok })
}

// AccountByConta finds an account by its Pix account number.
func (s *Service) AccountByConta(conta string) (Account, bool) {
	return s.findAccount(func() (*Account, bool) { a, ok := s.byConta[conta]; return a, ok })
}

// AccountByKey finds the account that owns a Pix key (compared after
// NormalizeKey).
func (s *Service) AccountByKey(key string) (Account, bool) {
	key = NormalizeKey(key)
	return s.findAccount(func() (*Account, bool) { a, ok := s.byKey[key]; return a, ok })
}

// principalOf returns the (shared, read-only) principal of app.
func (s *Service) principalOf(app *App) *Principal {
	s.mu.RLock()
	p, ok := s.pcache[app.ClientID]
	s.mu.RUnlock()
	if ok {
		return p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.apps[app.ClientID]
	if !ok {
		cur = app
	}
	p = s.principal(cur)
	if ok {
		s.pcache[app.ClientID] = p
	}
	return p
}

func (s *Service) principal(app *App) *Principal {
	a := s.accounts[app.AccountID]
	return &Principal{AccountID: a.ID, AppID: app.ClientID, PayeeCode: a.PayeeCode, Conta: a.Conta, CNPJ: a.CNPJ,
		Name: a.Name, Keys: slices.Clone(a.Keys), Scopes: slices.Clone(app.Scopes)}
}

// authenticate checks Basic client credentials.
func (s *Service) authenticate(clientID, secret string) (*App, bool) {
	app, ok := s.appByID(clientID)
	if !ok {
		checkSecret(&App{Salt: "00", SecretHash: strings.Repeat("0", 64)}, secret) // same work either way
		return nil, false
	}
	return app, checkSecret(app, secret)
}

func hashSecret(salt, secret string) string {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write([]byte(secret))
	return hex.EncodeToString(h.Sum(nil))
}

func checkSecret(app *App, secret string) bool {
	got := hashSecret(app.Salt, secret)
	return subtle.ConstantTimeCompare([]byte(got), []byte(app.SecretHash)) == 1
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("auth: crypto/rand failed: " + err.Error())
	}
	return b
}

// NewEVP returns a random EVP Pix key (a lowercase UUID v4).
func NewEVP() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func randomDigits(n int) []byte {
	b := randomBytes(n)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return b
}

func randomConta() string {
	d := randomDigits(7)
	if d[0] == '0' {
		d[0] = '1'
	}
	return string(d)
}

// randomCNPJ returns a valid numeric CNPJ of a head office (branch 0001).
func randomCNPJ() string {
	d := append(randomDigits(8), '0', '0', '0', '1')
	d = append(d, cnpjDV(d))
	d = append(d, cnpjDV(d))
	s := string(d)
	return s[0:2] + "." + s[2:5] + "." + s[5:8] + "/" + s[8:12] + "-" + s[12:14]
}

// cnpjDV computes the next check digit of a numeric CNPJ prefix (12 or 13 digits).
func cnpjDV(d []byte) byte {
	sum, w := 0, 2
	for i := len(d) - 1; i >= 0; i-- {
		sum += int(d[i]-'0') * w
		w++
		if w > 9 {
			w = 2
		}
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}
