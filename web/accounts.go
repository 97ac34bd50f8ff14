package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Account is a service account: where a remessa issues (the embedded
// service, or a company's account at the bank's sandbox or production) and
// with which credentials. Credentials are sealed (secrets.go) and never
// leave the server except to the service itself.
type Account struct {
	ID         int64
	Name       string
	Service    string // embedded, sandbox, production
	BaseURL    string
	PixBaseURL string
	HasCert    bool
	Created    string
	// NotifyToken is the secret path element of the account's
	// notification endpoints (inbox.go); only account() loads it.
	NotifyToken string
}

// Credentials are an account's secrets, sealed at rest.
type Credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	P12          []byte `json:"p12,omitempty"`
	P12Password  string `json:"p12_password,omitempty"`
}

// EmbeddedAccountName is the account created on first start.
const EmbeddedAccountName = "Embutido (local)"

func (s *Server) ensureEmbeddedAccount(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO accounts (name, service, created_at, notify_token) SELECT ?, 'embedded', ?, ?
		WHERE NOT EXISTS (SELECT 1 FROM accounts WHERE service = 'embedded')`, EmbeddedAccountName, nowText(), newNotifyToken())
	return err
}

// account loads one account.
func (s *Server) account(ctx context.Context, id int64) (*Account, error) {
	var a Account
	var cert int
	err := s.db.QueryRowContext(ctx, `SELECT id, name, service, base_url, pix_base_url, has_cert, created_at, notify_token FROM accounts WHERE id = ?`, id).
		Scan(&a.ID, &a.Name, &a.Service, &a.BaseURL, &a.PixBaseURL, &cert, &a.Created, &a.NotifyToken)
	if err != nil {
		return nil, err
	}
	a.HasCert = cert != 0
	return &a, nil
}

// accounts lists the accounts u may use (all of them when u is limited to none).
func (s *Server) accounts(ctx context.Context, u User) ([]Account, error) {
	f := s.accountFilter(ctx, u)
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, service, base_url, pix_base_url, has_cert, created_at FROM accounts WHERE `+f.where("id")+` ORDER BY id`, f.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		var a Account
		var cert int
		if err := rows.Scan(&a.ID, &a.Name, &a.Service, &a.BaseURL, &a.PixBaseURL, &cert, &a.Created); err != nil {
			return nil, err
		}
		a.HasCert = cert != 0
		out = append(out, a)
	}
	return out, rows.Err()
}

// accFilter restricts queries to the accounts a user may see.
type accFilter struct {
	all  bool
	ids  []int64
	args []any
}

func (f accFilter) where(col string) string {
	if f.all {
		return "1=1"
	}
	if len(f.ids) == 0 {
		return "0=1"
	}
	return col + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(f.ids)), ",") + ")"
}

func (f accFilter) allows(id int64) bool {
	if f.all {
		return true
	}
	for _, x := range f.ids {
		if x == id {
			return true
		}
	}
	return false
}

// accountFilter: a user with no account limits sees every account.
func (s *Server) accountFilter(ctx context.Context, u User) accFilter {
	rows, err := s.db.QueryContext(ctx, `SELECT account_id FROM user_accounts WHERE user_id = ?`, u.ID)
	if err != nil {
		return accFilter{}
	}
	defer rows.Close()
	var f accFilter
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			f.ids = append(f.ids, id)
			f.args = append(f.args, id)
		}
	}
	if len(f.ids) == 0 {
		f.all = true
	}
	return f
}

// credentials opens an account's sealed credentials.
func (s *Server) credentials(ctx context.Context, accountID int64) (*Credentials, error) {
	var sealed []byte
	err := s.db.QueryRowContext(ctx, `SELECT secrets FROM accounts WHERE id = ?`, accountID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) || len(sealed) == 0 {
		return nil, fmt.Errorf("a conta não tem credenciais cadastradas; peça a um administrador")
	}
	if err != nil {
		return nil, err
	}
	plain, err := unseal(s.key, sealed, []byte("account:"+strconv.FormatInt(accountID, 10)))
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(plain, &c); err != nil {
		return nil, errors.New("credenciais cifradas ilegíveis")
	}
	return &c, nil
}

// saveCredentials seals and stores an account's credentials.
func (s *Server) saveCredentials(ctx context.Context, accountID int64, c *Credentials) error {
	plain, err := json.Marshal(c)
	if err != nil {
		return err
	}
	sealed, err := seal(s.key, plain, []byte("account:"+strconv.FormatInt(accountID, 10)))
	if err != nil {
		return err
	}
	cert := 0
	if len(c.P12) > 0 {
		cert = 1
	}
	_, err = s.db.ExecContext(ctx, `UPDATE accounts SET secrets = ?, has_cert = ? WHERE id = ?`, sealed, cert, accountID)
	return err
}
