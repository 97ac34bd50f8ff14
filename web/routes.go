package web

import (
	"crypto/subtle"
	"io/fs"
	"net/http"
	"time"

	"remessa/internal/metrics"
)

// routes registers every page and action. Pages (GET) need a session; every
// other method also needs the CSRF token (guard). The roles:
// viewer reads, operator prepares and runs on the embedded service,
// approver confirms sandbox and production runs, admin manages users and
// service accounts.
func (s *Server) routes() {
	m := http.NewServeMux()
	s.mux = m
	static, _ := fs.Sub(staticFS, "static")
	fileServer := http.StripPrefix("/static/", http.FileServerFS(static))
	m.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fileServer.ServeHTTP(w, r)
	}))
	m.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/static/favicon.svg", http.StatusMovedPermanently)
	})
	s.mountOps(m)
	s.mountInbox(m)
	m.HandleFunc("GET /entrar", s.loginPage)
	m.HandleFunc("POST /entrar", s.login)
	m.HandleFunc("POST /sair", s.guard(RoleViewer, s.logout))
	m.HandleFunc("GET /{$}", s.guard(RoleViewer, s.home))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
	})
	for _, rt := range s.extraRoutes() {
		m.HandleFunc(rt.pattern, s.guard(rt.role, rt.h))
	}
}

// route is one guarded route: pattern, the least role, handler.
type route struct {
	pattern string
	role    Role
	h       func(http.ResponseWriter, *http.Request, *session)
}

// Routes lists the guarded routes with the least role each needs (tests
// walk it: every state-changing route refuses a role below it).
func (s *Server) Routes() []struct {
	Pattern string
	Role    Role
} {
	var out []struct {
		Pattern string
		Role    Role
	}
	out = append(out, struct {
		Pattern string
		Role    Role
	}{"POST /sair", RoleViewer})
	for _, rt := range s.extraRoutes() {
		out = append(out, struct {
			Pattern string
			Role    Role
		}{rt.pattern, rt.role})
	}
	return out
}

const loginCookie = "remessa_entrada"

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	if ss, _ := s.sessionFrom(r); ss != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.renderLogin(w, r, "", http.StatusOK)
}

// renderLogin shows the sign-in form with a fresh pre-session token
// (double-submit: a cookie and a form field that must match), so a
// sign-in cannot be forged from another site either.
func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, msg string, status int) {
	tok := randomToken(24)
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: "/entrar", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.cfg.TLSCert != "", MaxAge: 3600})
	p := s.page(r, nil, tr(langOf(r), "login.title"), safeReturn(r.FormValue("volta")))
	p.CSRF, p.Error, p.Status = tok, msg, status
	s.render(w, "login", p)
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	lang := langOf(r)
	c, err := r.Cookie(loginCookie)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		metrics.SignInFailed("token")
		s.renderLogin(w, r, tr(lang, "err.csrf"), http.StatusForbidden)
		return
	}
	user := r.PostFormValue("usuario")
	if len(user) > 100 {
		user = user[:100]
	}
	if !s.limiter.allow("ip:"+clientIP(r), "user:"+user) {
		metrics.SignInFailed("throttled")
		s.renderLogin(w, r, tr(lang, "login.slow"), http.StatusTooManyRequests)
		return
	}
	u, err := s.authenticate(r.Context(), user, r.PostFormValue("senha"))
	if err != nil {
		if err != errBadLogin {
			logOf(r.Context(), s.log).Error().Err(err).Msg("entrada")
		}
		metrics.SignInFailed("password")
		s.renderLogin(w, r, tr(lang, "login.bad"), http.StatusUnauthorized)
		return
	}
	metrics.SignIn()
	tok, err := s.newSession(r.Context(), u)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.audit(r.Context(), u.ID, "entrada", "")
	http.SetCookie(w, s.sessionCookieFor(tok, 0))
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/entrar", MaxAge: -1})
	http.Redirect(w, r, safeReturn(r.PostFormValue("volta")), http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request, ss *session) {
	s.endSession(r.Context(), ss)
	http.SetCookie(w, s.sessionCookieFor("", -1))
	http.Redirect(w, r, "/entrar", http.StatusSeeOther)
}

func nowText() string { return time.Now().UTC().Format(time.RFC3339Nano) }
