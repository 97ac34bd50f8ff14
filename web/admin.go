package web

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"software.sslmate.com/src/go-pkcs12"
)

// The administration pages: users (role, name, disabled, the accounts they
// are limited to, password resets) and service accounts (addresses and
// sealed credentials). Every route needs RoleAdmin; every change is
// audited, never with a secret in the detail. A password the app makes up
// is shown once, on the page the change redirects to, and kept nowhere
// but in memory until then (shownOnce). Credentials go in only through
// saveCredentials and never come back out into a page.

// adminRoutes are the administration routes (extraRoutes appends them).
func (s *Server) adminRoutes() []route {
	return []route{
		{"GET /admin/usuarios", RoleAdmin, s.adminUsers},
		{"POST /admin/usuarios", RoleAdmin, s.adminCreateUser},
		{"GET /admin/usuarios/{id}", RoleAdmin, s.adminUser},
		{"POST /admin/usuarios/{id}", RoleAdmin, s.adminSaveUser},
		{"POST /admin/usuarios/{id}/senha", RoleAdmin, s.adminResetPassword},
		{"GET /admin/contas", RoleAdmin, s.adminAccounts},
		{"POST /admin/contas", RoleAdmin, s.adminCreateAccount},
		{"GET /admin/contas/{id}", RoleAdmin, s.adminAccount},
		{"POST /admin/contas/{id}", RoleAdmin, s.adminSaveAccount},
	}
}

// maxP12 is the largest certificate file accepted.
const maxP12 = 1 << 20

// ---- passwords shown once ----

// shownOnce keeps a generated password in memory between the POST that
// made it and the page it redirects to, under a random token bound to the
// admin's session and the user; taking it removes it, and it expires after
// a few minutes.
type shownOnce struct {
	mu sync.Mutex
	m  map[string]onceEntry
}

type onceEntry struct {
	session  string
	userID   int64
	password string
	exp      time.Time
}

var passwordsToShow shownOnce

const shownOnceTTL = 5 * time.Minute

func (o *shownOnce) put(session string, userID int64, pw string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.m == nil {
		o.m = map[string]onceEntry{}
	}
	for k, e := range o.m {
		if now.After(e.exp) {
			delete(o.m, k)
		}
	}
	tok := randomToken(18)
	o.m[tok] = onceEntry{session: session, userID: userID, password: pw, exp: now.Add(shownOnceTTL)}
	return tok
}

func (o *shownOnce) take(tok, session string, userID int64) string {
	if tok == "" {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.m[tok]
	if !ok || e.session != session || e.userID != userID {
		return ""
	}
	delete(o.m, tok)
	if time.Now().After(e.exp) {
		return ""
	}
	return e.password
}

// ---- users ----

// adminUserRow is a user as the admin pages show it.
type adminUserRow struct {
	User
	Accounts   []string // names of the accounts the user is limited to; none = all
	AccountIDs map[int64]bool
}

type userForm struct {
	Username string
	Name     string
	Role     Role
}

type adminUsersData struct {
	Users []adminUserRow
	Roles []Role
	Form  userForm
	Errs  map[string]string
}

type acctCheck struct {
	Account
	Checked bool
}

type adminUserData struct {
	U           adminUserRow
	Roles       []Role
	Accounts    []acctCheck
	Errs        map[string]string
	NewPassword string
	Self        bool
}

func adminPathID(r *http.Request) (int64, bool) { return pathID(r) }

// adminUserList loads every user with the names of the accounts each is limited to.
func (s *Server) adminUserList(ctx context.Context) ([]adminUserRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, username, name, role, disabled, created_at FROM users ORDER BY username`)
	if err != nil {
		return nil, err
	}
	var out []adminUserRow
	idx := map[int64]int{}
	for rows.Next() {
		var u adminUserRow
		var role string
		var disabled int
		if err := rows.Scan(&u.ID, &u.Username, &u.Name, &role, &disabled, &u.Created); err != nil {
			rows.Close()
			return nil, err
		}
		u.Role, u.Disabled, u.AccountIDs = Role(role), disabled != 0, map[int64]bool{}
		idx[u.ID] = len(out)
		out = append(out, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = s.db.QueryContext(ctx, `SELECT ua.user_id, a.id, a.name FROM user_accounts ua JOIN accounts a ON a.id = ua.account_id ORDER BY a.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var uid, aid int64
		var name string
		if err := rows.Scan(&uid, &aid, &name); err != nil {
			return nil, err
		}
		if i, ok := idx[uid]; ok {
			out[i].Accounts = append(out[i].Accounts, name)
			out[i].AccountIDs[aid] = true
		}
	}
	return out, rows.Err()
}

// adminLoadUser loads one user; nil when there is none.
func (s *Server) adminLoadUser(ctx context.Context, id int64) (*adminUserRow, error) {
	var u adminUserRow
	var role string
	var disabled int
	err := s.db.QueryRowContext(ctx, `SELECT id, username, name, role, disabled, created_at FROM users WHERE id = ?`, id).
		Scan(&u.ID, &u.Username, &u.Name, &role, &disabled, &u.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u.Role, u.Disabled, u.AccountIDs = Role(role), disabled != 0, map[int64]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.name FROM user_accounts ua JOIN accounts a ON a.id = ua.account_id WHERE ua.user_id = ? ORDER BY a.name`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var aid int64
		var name string
		if err := rows.Scan(&aid, &name); err != nil {
			return nil, err
		}
		u.Accounts = append(u.Accounts, name)
		u.AccountIDs[aid] = true
	}
	return &u, rows.Err()
}

func (s *Server) adminUsers(w http.ResponseWriter, r *http.Request, ss *session) {
	s.renderUsers(w, r, ss, userForm{Role: RoleOperator}, nil, http.StatusOK)
}

func (s *Server) renderUsers(w http.ResponseWriter, r *http.Request, ss *session, f userForm, errs map[string]string, status int) {
	users, err := s.adminUserList(r.Context())
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	p := s.page(r, ss, tr(langOf(r), "admin.users.title"), adminUsersData{Users: users, Roles: Roles, Form: f, Errs: errs})
	p.Status = status
	if len(errs) > 0 {
		p.Error = tr(p.Lang, "admin.err.form")
	}
	s.render(w, "admin_users", p)
}

func (s *Server) adminUserExists(ctx context.Context, username string) bool {
	var n int
	s.db.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE username = ?`, username).Scan(&n)
	return n > 0
}

func (s *Server) adminCreateUser(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	f := userForm{
		Username: strings.ToLower(strings.TrimSpace(r.PostFormValue("usuario"))),
		Name:     strings.TrimSpace(r.PostFormValue("nome")),
		Role:     Role(r.PostFormValue("papel")),
	}
	pw := r.PostFormValue("senha")
	errs := map[string]string{}
	if !validUsername(f.Username) {
		errs["usuario"] = tr(lang, "admin.err.username")
	} else if s.adminUserExists(ctx, f.Username) {
		errs["usuario"] = tr(lang, "admin.err.username_taken")
	}
	if msg := checkPersonName(lang, f.Name); msg != "" {
		errs["nome"] = msg
	}
	if _, ok := ParseRole(string(f.Role)); !ok {
		errs["papel"] = tr(lang, "admin.err.role")
	}
	generated := pw == ""
	if generated {
		pw = RandomPassword()
	} else if checkPasswordRules(pw) != "" {
		errs["senha"] = fmt.Sprintf(tr(lang, "admin.err.password"), minPasswordLen)
	}
	var id int64
	if len(errs) == 0 {
		var err error
		id, err = s.createUser(ctx, f.Username, f.Name, pw, f.Role)
		if err != nil {
			if !s.adminUserExists(ctx, f.Username) {
				s.adminFail(w, r, err)
				return
			}
			errs["usuario"] = tr(lang, "admin.err.username_taken")
		}
	}
	if len(errs) > 0 {
		s.renderUsers(w, r, ss, f, errs, http.StatusBadRequest)
		return
	}
	s.audit(ctx, ss.User.ID, "usuario.criar", fmt.Sprintf("usuario=%s papel=%s senha_gerada=%t", f.Username, f.Role, generated))
	to := fmt.Sprintf("/admin/usuarios/%d?ok=created", id)
	if generated {
		to += "&mostrar=" + passwordsToShow.put(ss.hash, id, pw)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (s *Server) adminUser(w http.ResponseWriter, r *http.Request, ss *session) {
	id, ok := adminPathID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	u, err := s.adminLoadUser(r.Context(), id)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	if u == nil {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return
	}
	pw := passwordsToShow.take(r.URL.Query().Get("mostrar"), ss.hash, id)
	s.renderUser(w, r, ss, u, nil, pw, http.StatusOK)
}

func (s *Server) renderUser(w http.ResponseWriter, r *http.Request, ss *session, u *adminUserRow, errs map[string]string, newPassword string, status int) {
	accs, err := s.accounts(r.Context(), User{})
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	d := adminUserData{U: *u, Roles: Roles, Errs: errs, NewPassword: newPassword, Self: u.ID == ss.User.ID}
	for _, a := range accs {
		d.Accounts = append(d.Accounts, acctCheck{Account: a, Checked: u.AccountIDs[a.ID]})
	}
	p := s.page(r, ss, fmt.Sprintf(tr(langOf(r), "admin.user.title"), u.Username), d)
	p.Status = status
	if len(errs) > 0 {
		p.Error = tr(p.Lang, "admin.err.form")
		if m := errs["geral"]; m != "" {
			p.Error = m
		}
	}
	s.render(w, "admin_user", p)
}

// errLastAdmin: the change would leave no active administrator.
var errLastAdmin = errors.New("último administrador ativo")

// updateUser saves a user's name, role, disabled flag and account limits in
// one transaction, refusing to demote or disable the last active admin.
// Disabling a user ends their sessions.
func (s *Server) updateUser(ctx context.Context, id int64, name string, role Role, disabled bool, accounts []int64) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var curRole string
	var curDisabled int
	if err := tx.QueryRowContext(ctx, `SELECT role, disabled FROM users WHERE id = ?`, id).Scan(&curRole, &curDisabled); err != nil {
		return err
	}
	if Role(curRole) == RoleAdmin && curDisabled == 0 && (role != RoleAdmin || disabled) {
		var others int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = ? AND disabled = 0 AND id <> ?`, string(RoleAdmin), id).Scan(&others); err != nil {
			return err
		}
		if others == 0 {
			return errLastAdmin
		}
	}
	dis := 0
	if disabled {
		dis = 1
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET name = ?, role = ?, disabled = ? WHERE id = ?`, name, string(role), dis, id); err != nil {
		return err
	}
	if disabled {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, id); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_accounts WHERE user_id = ?`, id); err != nil {
		return err
	}
	for _, a := range accounts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_accounts (user_id, account_id) VALUES (?, ?)`, id, a); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *Server) adminSaveUser(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	u := s.adminUserFor(w, r)
	if u == nil {
		return
	}
	id := u.ID
	before := *u
	errs := map[string]string{}
	name := strings.TrimSpace(r.PostFormValue("nome"))
	if msg := checkPersonName(lang, name); msg != "" {
		errs["nome"] = msg
	}
	role, ok := ParseRole(r.PostFormValue("papel"))
	if !ok {
		errs["papel"] = tr(lang, "admin.err.role")
		role = u.Role
	}
	disabled := r.PostFormValue("desativado") != ""
	all, err := s.accounts(ctx, User{})
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	known := map[int64]string{}
	for _, a := range all {
		known[a.ID] = a.Name
	}
	var accIDs []int64
	chosen := map[int64]bool{}
	var names []string
	for _, v := range r.PostForm["contas"] {
		aid, err := strconv.ParseInt(v, 10, 64)
		if err != nil || known[aid] == "" {
			errs["contas"] = tr(lang, "admin.err.account_unknown")
			continue
		}
		if !chosen[aid] {
			chosen[aid] = true
			accIDs = append(accIDs, aid)
			names = append(names, known[aid])
		}
	}
	// what the form shows again if something is wrong
	u.Name, u.Role, u.Disabled, u.AccountIDs = name, role, disabled, chosen
	if len(errs) == 0 {
		err := s.updateUser(ctx, id, name, role, disabled, accIDs)
		if errors.Is(err, errLastAdmin) {
			if role != RoleAdmin {
				errs["papel"] = tr(lang, "admin.err.last_admin_role")
			} else {
				errs["desativado"] = tr(lang, "admin.err.last_admin_disable")
			}
			errs["geral"] = tr(lang, "admin.err.last_admin")
		} else if err != nil {
			s.adminFail(w, r, err)
			return
		}
	}
	if len(errs) > 0 {
		s.renderUser(w, r, ss, u, errs, "", http.StatusBadRequest)
		return
	}
	sort.Strings(names)
	detail := fmt.Sprintf("usuario=%s", u.Username)
	if before.Role != role {
		detail += fmt.Sprintf(" papel=%s->%s", before.Role, role)
	}
	if before.Disabled != disabled {
		detail += fmt.Sprintf(" desativado=%t", disabled)
	}
	if before.Name != name {
		detail += " nome"
	}
	detail += fmt.Sprintf(" contas=%q", strings.Join(names, ","))
	s.audit(ctx, ss.User.ID, "usuario.editar", detail)
	if id == ss.User.ID && (role != RoleAdmin || disabled) {
		// an admin who gave up their own admin role (or account) goes home
		http.Redirect(w, r, "/?ok=saved", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/admin/usuarios/%d?ok=saved", id), http.StatusSeeOther)
}

func (s *Server) adminResetPassword(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx, lang := r.Context(), langOf(r)
	u := s.adminUserFor(w, r)
	if u == nil {
		return
	}
	id := u.ID
	pw := r.PostFormValue("senha")
	generated := pw == ""
	if generated {
		pw = RandomPassword()
	} else if checkPasswordRules(pw) != "" {
		s.renderUser(w, r, ss, u, map[string]string{"senha": fmt.Sprintf(tr(lang, "admin.err.password"), minPasswordLen)}, "", http.StatusBadRequest)
		return
	}
	if err := s.setPassword(ctx, id, pw); err != nil {
		s.adminFail(w, r, err)
		return
	}
	sessHash := ss.hash
	if id == ss.User.ID {
		// setPassword ended every session of the user, this one too: an
		// admin who resets their own password stays signed in here.
		tok, err := s.newSession(ctx, ss.User)
		if err != nil {
			s.adminFail(w, r, err)
			return
		}
		http.SetCookie(w, s.sessionCookieFor(tok, 0))
		sessHash = tokenHash(tok)
	}
	s.audit(ctx, ss.User.ID, "usuario.senha", fmt.Sprintf("usuario=%s senha_gerada=%t", u.Username, generated))
	to := fmt.Sprintf("/admin/usuarios/%d?ok=password", id)
	if generated {
		to += "&mostrar=" + passwordsToShow.put(sessHash, id, pw)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func checkPersonName(lang, name string) string {
	if len([]rune(name)) > 100 || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return tr(lang, "admin.err.name")
	}
	return ""
}

// ---- service accounts ----

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
	res, err := s.db.ExecContext(ctx, `INSERT INTO accounts (name, service, base_url, pix_base_url, created_at) VALUES (?, ?, ?, ?, ?)`,
		f.Name, f.Service, f.BaseURL, f.PixBaseURL, nowText())
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
	d := adminAccountData{A: *a, Form: f, Errs: errs}
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

// adminFail logs an unexpected error and answers the plain failure page.
func (s *Server) adminFail(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error().Err(err).Str("path", r.URL.Path).Msg("administração")
	s.fail(w, r, http.StatusInternalServerError, msgInternal)
}

// adminUserFor loads the user of the request's {id}, answering 404 (or
// the failure page) itself when there is none.
func (s *Server) adminUserFor(w http.ResponseWriter, r *http.Request) *adminUserRow {
	id, ok := adminPathID(r)
	if !ok {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
		return nil
	}
	u, err := s.adminLoadUser(r.Context(), id)
	if err != nil {
		s.adminFail(w, r, err)
		return nil
	}
	if u == nil {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
	}
	return u
}
