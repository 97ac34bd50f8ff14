package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"
)

// Role is what a user may do. Each role includes the ones below it:
// admin > approver > operator > viewer.
type Role string

// Roles, from least to most allowed.
const (
	RoleViewer   Role = "viewer"   // reads runs and downloads reports
	RoleOperator Role = "operator" // uploads, validates, plans, runs on the embedded service
	RoleApprover Role = "approver" // also confirms runs on sandbox and production
	RoleAdmin    Role = "admin"    // also users and service accounts
)

var roleRank = map[Role]int{RoleViewer: 1, RoleOperator: 2, RoleApprover: 3, RoleAdmin: 4}

// Roles lists the roles in order, for forms.
var Roles = []Role{RoleViewer, RoleOperator, RoleApprover, RoleAdmin}

// ParseRole returns the role named s.
func ParseRole(s string) (Role, bool) {
	r := Role(s)
	_, ok := roleRank[r]
	return r, ok
}

// Allows reports whether a user with role r may do what role need allows.
func (r Role) Allows(need Role) bool { return roleRank[r] >= roleRank[need] && roleRank[need] > 0 }

// User is a person who signs in.
type User struct {
	ID       int64
	Username string
	Name     string
	Role     Role
	Disabled bool
	Created  string
}

// session is a signed-in browser.
type session struct {
	User User
	CSRF string
	hash string
}

const (
	sessionCookie  = "remessa_sessao"
	minPasswordLen = 10
)

var errBadLogin = errors.New("usuário ou senha incorretos")

// bcryptCost is the work factor of stored password hashes (tests lower it:
// the race detector makes bcrypt at the default cost ten times slower).
var bcryptCost = bcrypt.DefaultCost

// hashPassword hashes a password with bcrypt.
func hashPassword(pw string) (string, error) {
	if len(pw) > 72 {
		return "", fmt.Errorf("a senha pode ter no máximo 72 caracteres")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcryptCost)
	return string(h), err
}

// checkPasswordRules says what is wrong with a new password, or "".
func checkPasswordRules(pw string) string {
	switch {
	case len(pw) < minPasswordLen:
		return fmt.Sprintf("a senha precisa ter pelo menos %d caracteres", minPasswordLen)
	case len(pw) > 72:
		return "a senha pode ter no máximo 72 caracteres"
	}
	return ""
}

// randomToken returns n random bytes as URL-safe base64.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// RandomPassword returns a password for a new account, easy to type.
func RandomPassword() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:4]) + "-" + string(b[4:8]) + "-" + string(b[8:12]) + "-" + string(b[12:])
}

func tokenHash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// createUser adds a user; the password is stored hashed.
func (s *Server) createUser(ctx context.Context, username, name, password string, role Role) (int64, error) {
	username = strings.TrimSpace(strings.ToLower(username))
	if !validUsername(username) {
		return 0, fmt.Errorf("nome de usuário inválido: use de 2 a 40 letras minúsculas, números, ponto, hífen ou sublinhado")
	}
	if msg := checkPasswordRules(password); msg != "" {
		return 0, errors.New(msg)
	}
	if _, ok := roleRank[role]; !ok {
		return 0, fmt.Errorf("papel desconhecido: %q", role)
	}
	h, err := hashPassword(password)
	if err != nil {
		return 0, err
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO users (username, name, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?)`,
		username, strings.TrimSpace(name), h, string(role), nowText())
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return 0, fmt.Errorf("já existe um usuário %q", username)
		}
		return 0, err
	}
	return res.LastInsertId()
}

func validUsername(u string) bool {
	if len(u) < 2 || len(u) > 40 {
		return false
	}
	for _, r := range u {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// setPassword replaces a user's password and signs them out everywhere.
func (s *Server) setPassword(ctx context.Context, userID int64, password string) error {
	if msg := checkPasswordRules(password); msg != "" {
		return errors.New(msg)
	}
	h, err := hashPassword(password)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, h, userID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID); err != nil {
		return err
	}
	return tx.Commit()
}

// dummyHash makes a login for an unknown user cost as much as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("remessa-dummy-password"), bcrypt.DefaultCost)

// authenticate checks a username and password.
func (s *Server) authenticate(ctx context.Context, username, password string) (User, error) {
	var u User
	var hash, role string
	var disabled int
	err := s.db.QueryRowContext(ctx, `SELECT id, username, name, password_hash, role, disabled FROM users WHERE username = ?`,
		strings.TrimSpace(strings.ToLower(username))).Scan(&u.ID, &u.Username, &u.Name, &hash, &role, &disabled)
	if errors.Is(err, sql.ErrNoRows) {
		bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return User{}, errBadLogin
	}
	if err != nil {
		return User{}, err
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil || disabled != 0 {
		return User{}, errBadLogin
	}
	u.Role = Role(role)
	return u, nil
}

// newSession signs u in and returns the cookie value.
func (s *Server) newSession(ctx context.Context, u User) (string, error) {
	tok := randomToken(32)
	now := s.now().Unix()
	_, err := s.db.ExecContext(ctx, `INSERT INTO sessions (token_hash, user_id, csrf, created_at, seen_at) VALUES (?, ?, ?, ?, ?)`,
		tokenHash(tok), u.ID, randomToken(32), now, now)
	return tok, err
}

// sessionFrom finds the session of a request's cookie, ending it when it
// has been idle too long. A session is refreshed at most once a minute.
func (s *Server) sessionFrom(r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, nil
	}
	h := tokenHash(c.Value)
	var ss session
	var role string
	var seen int64
	var disabled int
	err = s.db.QueryRowContext(r.Context(), `SELECT s.csrf, s.seen_at, u.id, u.username, u.name, u.role, u.disabled
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`, h).
		Scan(&ss.CSRF, &seen, &ss.User.ID, &ss.User.Username, &ss.User.Name, &role, &disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if disabled != 0 || now.Sub(time.Unix(seen, 0)) > s.cfg.IdleTimeout {
		s.db.ExecContext(r.Context(), `DELETE FROM sessions WHERE token_hash = ?`, h)
		return nil, nil
	}
	if now.Unix()-seen >= 60 {
		s.db.ExecContext(r.Context(), `UPDATE sessions SET seen_at = ? WHERE token_hash = ?`, now.Unix(), h)
	}
	ss.User.Role = Role(role)
	ss.hash = h
	return &ss, nil
}

func (s *Server) endSession(ctx context.Context, ss *session) {
	s.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, ss.hash)
}

// sessionCookieFor is the cookie that carries a session token: HttpOnly,
// SameSite=Strict, Secure over TLS.
func (s *Server) sessionCookieFor(tok string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.cfg.TLSCert != "", MaxAge: maxAge}
}

// checkCSRF compares the request's token (form field csrf or header
// X-CSRF-Token) with the session's, in constant time.
func checkCSRF(r *http.Request, ss *session) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(ss.CSRF)) == 1
}

// loginLimiter slows down password guessing: per client address and per
// username, 5 attempts at once and then one every 12 seconds.
type loginLimiter struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

func (l *loginLimiter) allow(keys ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) > 10000 {
		l.m = map[string]*rate.Limiter{}
	}
	ok := true
	for _, k := range keys {
		lim := l.m[k]
		if lim == nil {
			lim = rate.NewLimiter(rate.Every(12*time.Second), 5)
			l.m[k] = lim
		}
		if !lim.Allow() {
			ok = false
		}
	}
	return ok
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ensureAdmin creates the first administrator when there is no user yet,
// returning its password (the one given, or a random one) to print once.
func (s *Server) ensureAdmin(ctx context.Context, password string) (created bool, pw string, err error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return false, "", err
	}
	if n > 0 {
		return false, "", nil
	}
	if password == "" {
		password = RandomPassword()
	}
	if _, err := s.createUser(ctx, "admin", "Administrador", password, RoleAdmin); err != nil {
		return false, "", err
	}
	return true, password, nil
}
