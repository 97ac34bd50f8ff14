package web

// The administration pages of service accounts: the companies a billing
// desk issues for, with their sealed credentials.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"software.sslmate.com/src/go-pkcs12"
)

// adminAccountRow is an account as the admin pages show it: whether
// credentials and a certificate are stored, never what they are.
type adminAccountRow struct {
	Account
	HasCreds bool
	Users    int // users limited to this account
}

type accountForm struct {
	Name       string
	Service    string
	BaseURL    string
	PixBaseURL string
}

type adminAccountsData struct {
	Accounts []adminAccountRow
	Services []string
	Form     accountForm
	Errs     map[string]string
}

type adminAccountData struct {
	A           adminAccountRow
	Form        accountForm
	Errs        map[string]string
	CredsBroken bool
	Notify      *notifyView
}

// notifyView is what the account page shows of its notification
// endpoints (inbox.go).
type notifyView struct {
	Embedded bool   // the embedded account: its runs name the desk by themselves
	Public   bool   // the addresses are on --public-url (else on the page's own address)
	NotifURL string // the charges API's notification_url
	PixURL   string // the Pix webhook (the service appends /pix)
	Received int    // deliveries kept for the account
	Pending  int
	Refused  int
	LastAt   string
}

// newAccountServices are the services an admin can create accounts for
// (the embedded account exists already).
var newAccountServices = []string{"sandbox", "production"}

const accountCols = `a.id, a.name, a.service, a.base_url, a.pix_base_url, a.has_cert, a.created_at,
	a.secrets IS NOT NULL AND length(a.secrets) > 0, (SELECT count(*) FROM user_accounts ua WHERE ua.account_id = a.id)`

func scanAccount(sc interface{ Scan(...any) error }) (adminAccountRow, error) {
	var a adminAccountRow
	var cert, creds int
	err := sc.Scan(&a.ID, &a.Name, &a.Service, &a.BaseURL, &a.PixBaseURL, &cert, &a.Created, &creds, &a.Users)
	a.HasCert, a.HasCreds = cert != 0, creds != 0
	return a, err
}

func (s *Server) adminAccountList(ctx context.Context) ([]adminAccountRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+accountCols+` FROM accounts a ORDER BY a.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []adminAccountRow
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s *Server) adminLoadAccount(ctx context.Context, id int64) (*adminAccountRow, error) {
	a, err := scanAccount(s.db.QueryRowContext(ctx, `SELECT `+accountCols+` FROM accounts a WHERE a.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

func (s *Server) adminAccounts(w http.ResponseWriter, r *http.Request, ss *session) {
	s.renderAccounts(w, r, ss, accountForm{Service: "sandbox"}, nil, http.StatusOK)
}

func (s *Server) renderAccounts(w http.ResponseWriter, r *http.Request, ss *session, f accountForm, errs map[string]string, status int) {
	list, err := s.adminAccountList(r.Context())
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	p := s.page(r, ss, tr(langOf(r), "admin.accounts.title"), adminAccountsData{Accounts: list, Services: newAccountServices, Form: f, Errs: errs})
	p.Status = status
	if len(errs) > 0 {
		p.Error = tr(p.Lang, "admin.err.form")
	}
	s.render(w, "admin_accounts", p)
}

// accountNameTaken reports whether another account (not except) has name.
func (s *Server) accountNameTaken(ctx context.Context, name string, except int64) bool {
	var n int
	s.db.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE name = ? AND id <> ?`, name, except).Scan(&n)
	return n > 0
}

// readAccountForm reads and checks the name and addresses of an account
// form; service is the account's service (fixed after creation).
func (s *Server) readAccountForm(r *http.Request, lang string, service string, self int64, errs map[string]string) accountForm {
	f := accountForm{
		Name:       strings.TrimSpace(r.PostFormValue("nome")),
		Service:    service,
		BaseURL:    strings.TrimSpace(r.PostFormValue("base_url")),
		PixBaseURL: strings.TrimSpace(r.PostFormValue("pix_base_url")),
	}
	if n := len([]rune(f.Name)); n == 0 || n > 80 || strings.IndexFunc(f.Name, unicode.IsControl) >= 0 {
		errs["nome"] = tr(lang, "admin.err.accname")
	} else if s.accountNameTaken(r.Context(), f.Name, self) {
		errs["nome"] = tr(lang, "admin.err.accname_taken")
	}
	if service == "embedded" {
		f.BaseURL, f.PixBaseURL = "", ""
		return f
	}
	for _, x := range []struct {
		field string
		v     *string
	}{{"base_url", &f.BaseURL}, {"pix_base_url", &f.PixBaseURL}} {
		v, key := checkServiceURL(*x.v, service)
		if key != "" {
			errs[x.field] = tr(lang, key)
		} else {
			*x.v = v
		}
	}
	return f
}

// checkServiceURL checks an optional service address: empty, or an
// absolute http(s) URL without credentials, query or fragment (https in
// production). It returns the address without a trailing slash (the
// client appends paths to it), or the dict key of what is wrong.
func checkServiceURL(v, service string) (string, string) {
	if v == "" {
		return "", ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.User != nil ||
		u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || len(v) > 500 || strings.ContainsAny(v, " \t\r\n") {
		return "", "admin.err.url"
	}
	if service == "production" && u.Scheme != "https" {
		return "", "admin.err.url_https"
	}
	return strings.TrimRight(v, "/"), ""
}

// readCredentials reads the credential fields of an account form over the
// stored ones (old; nil when none): an empty field keeps what is stored.
// It returns the credentials to store and whether anything changed; a
// certificate that changed (file or password) must open with its
// password. Problems go into errs.
func readCredentials(r *http.Request, lang string, old *Credentials, now time.Time, errs map[string]string) (*Credentials, bool) {
	var c Credentials
	if old != nil {
		c = *old
	}
	changed := false
	if v := strings.TrimSpace(r.PostFormValue("client_id")); v != "" {
		c.ClientID, changed = v, true
	}
	if v := strings.TrimSpace(r.PostFormValue("client_secret")); v != "" {
		c.ClientSecret, changed = v, true
	}
	if r.PostFormValue("remover_certificado") != "" && len(c.P12) > 0 {
		c.P12, c.P12Password, changed = nil, "", true
	}
	certChanged := false
	data, has, key := readP12Upload(r, "certificado", maxP12)
	if key != "" {
		errs["certificado"] = tr(lang, key)
	} else if has {
		c.P12, certChanged = data, true
	}
	if v := r.PostFormValue("senha_certificado"); v != "" {
		c.P12Password, certChanged = v, true
	}
	if certChanged && errs["certificado"] == "" {
		changed = true
		if len(c.P12) == 0 {
			errs["certificado"] = tr(lang, "admin.err.p12_missing")
		} else if msg := checkP12(lang, c.P12, c.P12Password, now); msg != "" {
			errs["certificado"] = msg
		}
	}
	if changed {
		if c.ClientID == "" {
			errs["client_id"] = tr(lang, "admin.err.required")
		}
		if c.ClientSecret == "" {
			errs["client_secret"] = tr(lang, "admin.err.required")
		}
	}
	return &c, changed
}

// readP12Upload reads an optional uploaded file of at most max bytes. It
// returns the dict key of a problem, if any.
func readP12Upload(r *http.Request, field string, max int64) ([]byte, bool, string) {
	if r.MultipartForm == nil {
		return nil, false, ""
	}
	f, h, err := r.FormFile(field)
	if errors.Is(err, http.ErrMissingFile) {
		return nil, false, ""
	}
	if err != nil {
		return nil, false, "admin.err.p12_read"
	}
	defer f.Close()
	if h.Size == 0 && h.Filename == "" {
		return nil, false, ""
	}
	if h.Size > max {
		return nil, false, "admin.err.p12_big"
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, "admin.err.p12_read"
	}
	if int64(len(data)) > max {
		return nil, false, "admin.err.p12_big"
	}
	if len(data) == 0 {
		return nil, false, "admin.err.p12_bad"
	}
	return data, true, ""
}

// checkP12 says what is wrong with a PKCS#12 certificate, or "": it must
// open with password and hold a private key and an unexpired certificate.
func checkP12(lang string, data []byte, password string, now time.Time) string {
	key, cert, _, err := pkcs12.DecodeChain(data, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return tr(lang, "admin.err.p12_password")
	}
	if err != nil || key == nil || cert == nil {
		return tr(lang, "admin.err.p12_bad")
	}
	if now.After(cert.NotAfter) {
		return fmt.Sprintf(tr(lang, "admin.err.p12_expired"), cert.NotAfter.Format("02/01/2006"))
	}
	return ""
}

func (s *Server) adminCreateAccount(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	errs := map[string]string{}
	service := r.PostFormValue("servico")
	known := false
	for _, sv := range newAccountServices {
		known = known || sv == service
	}
	if !known {
		errs["servico"] = tr(lang, "admin.err.service")
		service = "sandbox"
	}
	f := s.readAccountForm(r, lang, service, 0, errs)
	if !known {
		f.Service = ""
	}
	creds, hasCreds := readCredentials(r, lang, nil, s.now(), errs)
	if len(errs) > 0 {
		s.renderAccounts(w, r, ss, f, errs, http.StatusBadRequest)
		return
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO accounts (name, service, base_url, pix_base_url, created_at, notify_token) VALUES (?, ?, ?, ?, ?, ?)`,
		f.Name, f.Service, f.BaseURL, f.PixBaseURL, nowText(), newNotifyToken())
	if err != nil {
		if s.accountNameTaken(ctx, f.Name, 0) {
			errs["nome"] = tr(lang, "admin.err.accname_taken")
			s.renderAccounts(w, r, ss, f, errs, http.StatusBadRequest)
			return
		}
		s.adminFail(w, r, err)
		return
	}
	id, err := res.LastInsertId()
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if err := s.loadTokens(ctx); err != nil { // its notification endpoints answer at once
		s.log.Error().Err(err).Msg("conta: endereços de notificação")
	}
	if hasCreds {
		if err := s.saveCredentials(ctx, id, creds); err != nil {
			s.db.ExecContext(ctx, `DELETE FROM accounts WHERE id = ?`, id)
			s.adminFail(w, r, err)
			return
		}
	}
	s.audit(ctx, ss.User.ID, "conta.criar", fmt.Sprintf("conta=%d nome=%q servico=%s credenciais=%t certificado=%t",
		id, f.Name, f.Service, hasCreds, hasCreds && len(creds.P12) > 0))
	http.Redirect(w, r, fmt.Sprintf("/admin/contas/%d?ok=created", id), http.StatusSeeOther)
}

func (s *Server) adminAccount(w http.ResponseWriter, r *http.Request, ss *session) {
	id, ok := adminPathID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	a, err := s.adminLoadAccount(r.Context(), id)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if a == nil {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	f := accountForm{Name: a.Name, Service: a.Service, BaseURL: a.BaseURL, PixBaseURL: a.PixBaseURL}
	s.renderAccount(w, r, ss, a, f, nil, http.StatusOK)
}

func (s *Server) renderAccount(w http.ResponseWriter, r *http.Request, ss *session, a *adminAccountRow, f accountForm, errs map[string]string, status int) {
	d := adminAccountData{A: *a, Form: f, Errs: errs, Notify: s.notifyViewOf(r, a.ID, a.Service)}
	if a.HasCreds && a.Service != "embedded" {
		if _, err := s.credentials(r.Context(), a.ID); err != nil {
			d.CredsBroken = true
		}
	}
	p := s.page(r, ss, fmt.Sprintf(tr(langOf(r), "admin.account.title"), a.Name), d)
	p.Status = status
	if len(errs) > 0 {
		p.Error = tr(p.Lang, "admin.err.form")
	}
	s.render(w, "admin_account", p)
}

func (s *Server) adminSaveAccount(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	id, ok := adminPathID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, tr(lang, "err.notfound"))
		return
	}
	a, err := s.adminLoadAccount(ctx, id)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if a == nil {
		s.fail(w, r, http.StatusNotFound, tr(lang, "err.notfound"))
		return
	}
	errs := map[string]string{}
	f := s.readAccountForm(r, lang, a.Service, id, errs)
	var creds *Credentials
	credsChanged := false
	if a.Service != "embedded" {
		var old *Credentials
		if a.HasCreds {
			// unreadable stored credentials (the key changed) count as none:
			// the form then asks for all of them again
			old, _ = s.credentials(ctx, id)
		}
		creds, credsChanged = readCredentials(r, lang, old, s.now(), errs)
	}
	if len(errs) > 0 {
		s.renderAccount(w, r, ss, a, f, errs, http.StatusBadRequest)
		return
	}
	_, err = s.db.ExecContext(ctx, `UPDATE accounts SET name = ?, base_url = ?, pix_base_url = ? WHERE id = ?`, f.Name, f.BaseURL, f.PixBaseURL, id)
	if err != nil {
		if s.accountNameTaken(ctx, f.Name, id) {
			errs["nome"] = tr(lang, "admin.err.accname_taken")
			s.renderAccount(w, r, ss, a, f, errs, http.StatusBadRequest)
			return
		}
		s.adminFail(w, r, err)
		return
	}
	if credsChanged {
		if err := s.saveCredentials(ctx, id, creds); err != nil {
			s.adminFail(w, r, err)
			return
		}
	}
	// the inbox reads the account's notifications with what is stored now
	s.inbox.ForgetScope(accountScope(id))
	var changed []string
	if f.Name != a.Name {
		changed = append(changed, "nome")
	}
	if f.BaseURL != a.BaseURL || f.PixBaseURL != a.PixBaseURL {
		changed = append(changed, "enderecos")
	}
	if credsChanged {
		changed = append(changed, "credenciais")
	}
	s.audit(ctx, ss.User.ID, "conta.editar", fmt.Sprintf("conta=%d nome=%q campos=%s", id, f.Name, strings.Join(changed, ",")))
	http.Redirect(w, r, fmt.Sprintf("/admin/contas/%d?ok=saved", id), http.StatusSeeOther)
}
