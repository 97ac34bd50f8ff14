package web

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
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
		{"GET /admin/backup", RoleAdmin, s.adminBackupPage},
		{"POST /admin/backup", RoleAdmin, s.adminBackup},
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

// adminFail logs an unexpected error and answers the plain failure page.
func (s *Server) adminFail(w http.ResponseWriter, r *http.Request, err error) {
	logOf(r.Context(), s.log).Error().Err(err).Str("path", r.URL.Path).Msg("administração")
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
