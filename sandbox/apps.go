package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"remessa/sandbox/auth"
	"remessa/sandbox/store"
)

// AccountListing is one account with its applications, as "remessa
// sandbox apps" and GET /sandbox/apps show them (no secrets).
type AccountListing struct {
	ID        string         `json:"id"`
	PayeeCode string         `json:"payee_code"`
	Conta     string         `json:"conta"`
	CNPJ      string         `json:"cnpj"`
	Name      string         `json:"name"`
	PixKeys   []string       `json:"pix_keys"`
	Apps      []auth.AppInfo `json:"apps"`
}

// ListApps lists every account with its applications.
func ListApps(a *auth.Service) []AccountListing {
	apps := a.Apps()
	var out []AccountListing
	for _, acc := range a.Accounts() {
		l := AccountListing{ID: acc.ID, PayeeCode: acc.PayeeCode, Conta: acc.Conta, CNPJ: acc.CNPJ, Name: acc.Name,
			PixKeys: acc.Keys, Apps: []auth.AppInfo{}}
		if l.PixKeys == nil {
			l.PixKeys = []string{}
		}
		for _, app := range apps {
			if app.AccountID == acc.ID {
				l.Apps = append(l.Apps, app)
			}
		}
		out = append(out, l)
	}
	if out == nil {
		out = []AccountListing{}
	}
	return out
}

// AddAppRequest asks for a new application.
type AddAppRequest struct {
	// Account is "new" (or empty) for a new account, or the payee code or
	// internal id of an existing one.
	Account      string   `json:"account,omitempty"`
	Name         string   `json:"name,omitempty"` // name of a new account
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"` // default: every Pix scope
}

// AddApp creates an application (and, for Account "new", an account) and
// returns its credentials: the only time the secret is shown.
func AddApp(ctx context.Context, a *auth.Service, req AddAppRequest) (auth.Credentials, error) {
	// Everything the request can get wrong is checked before a new account
	// is created, so a refused request leaves nothing behind.
	if err := checkCredential("client_id", req.ClientID, ": "); err != nil {
		return auth.Credentials{}, err
	}
	if err := checkCredential("client_secret", req.ClientSecret, ""); err != nil {
		return auth.Credentials{}, err
	}
	if len(req.Name) > maxCredential {
		return auth.Credentials{}, fmt.Errorf("name: no máximo %d caracteres (recebido %d)", maxCredential, len(req.Name))
	}
	for _, app := range a.Apps() {
		if req.ClientID != "" && app.ClientID == req.ClientID {
			return auth.Credentials{}, fmt.Errorf("client_id %q: já existe", req.ClientID)
		}
	}
	var acc auth.Account
	switch strings.ToLower(req.Account) {
	case "", "new", "nova":
		var err error
		if acc, err = a.CreateAccount(ctx, req.Name); err != nil {
			return auth.Credentials{}, err
		}
	default:
		var ok bool
		if acc, ok = a.AccountByPayeeCode(req.Account); !ok {
			if acc, ok = a.Account(req.Account); !ok {
				return auth.Credentials{}, fmt.Errorf("conta %q não existe (use o payee_code listado por \"remessa sandbox apps\" ou \"new\")", req.Account)
			}
		}
	}
	for _, sc := range req.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t") {
			return auth.Credentials{}, fmt.Errorf("escopo inválido %q", sc)
		}
	}
	id, secret, err := a.CreateApp(ctx, acc.ID, req.ClientID, req.ClientSecret, req.Scopes)
	if err != nil {
		return auth.Credentials{}, err
	}
	c := auth.Credentials{AccountID: acc.ID, PayeeCode: acc.PayeeCode, Conta: acc.Conta, CNPJ: acc.CNPJ, Name: acc.Name,
		ClientID: id, ClientSecret: secret, Created: true}
	if len(acc.Keys) > 0 {
		c.PixKey = acc.Keys[0]
	}
	return c, nil
}

// maxCredential bounds client ids, secrets and account names.
const maxCredential = 255

// checkCredential refuses a value longer than maxCredential or with
// control characters or one of the forbidden characters.
func checkCredential(field, v, forbidden string) error {
	if len(v) > maxCredential {
		return fmt.Errorf("%s: no máximo %d caracteres (recebido %d)", field, maxCredential, len(v))
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(forbidden, r) {
			return fmt.Errorf("%s: caractere %q não permitido", field, r)
		}
	}
	return nil
}

// ErrNoSandbox is returned by OpenAuth when the data dir has no database.
var ErrNoSandbox = errors.New("sandbox: no database in the data dir")

// ErrBusy is returned when another process (a running sandbox) holds the
// data dir.
var ErrBusy = errors.New("sandbox: data dir in use by a running sandbox")

// OpenAuth opens the accounts of the sandbox in dataDir without serving
// (for "remessa sandbox apps"). With write it takes the data dir lock (so
// it fails with ErrBusy while a sandbox runs there, whose in-memory state
// would miss the change); reading works while a sandbox runs. The returned
// function closes everything.
func OpenAuth(dataDir string, write bool) (*auth.Service, func() error, error) {
	if dataDir == "" {
		var err error
		if dataDir, err = DefaultDataDir(); err != nil {
			return nil, nil, err
		}
	}
	path := filepath.Join(dataDir, DBFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoSandbox, path)
	}
	var lk *dirLock
	if write {
		var err error
		if lk, err = lockDir(dataDir); err != nil {
			return nil, nil, err
		}
	}
	st, err := store.Open(path)
	if err != nil {
		if lk != nil {
			lk.unlock()
		}
		return nil, nil, err
	}
	a, err := auth.New(context.Background(), st, auth.Options{})
	closeFn := func() error {
		err := st.Close()
		if lk != nil {
			lk.unlock()
		}
		return err
	}
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return a, closeFn, nil
}

// OpenAuthDB is OpenAuth over a PostgreSQL database (db, a postgres://
// URL: "remessa sandbox apps --db"): there is no data dir to lock, and
// none is needed — writers are serialised by the database, and the
// instances serving it find an application added here at its first
// look-up (they reload on a miss). A database no sandbox has started on
// (no account) is ErrNoSandbox; write is accepted for symmetry with
// OpenAuth.
func OpenAuthDB(db string, write bool) (*auth.Service, func() error, error) {
	_ = write
	if !store.IsPostgres(db) {
		return nil, nil, fmt.Errorf("sandbox: %s: not a postgres:// URL", store.Redact(db))
	}
	st, err := store.Open(db)
	if err != nil {
		return nil, nil, err
	}
	a, err := auth.New(context.Background(), st, auth.Options{})
	if err == nil && len(a.Accounts()) == 0 {
		err = fmt.Errorf("%w: %s", ErrNoSandbox, st.Path())
	}
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return a, st.Close, nil
}
