package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages holds one template set per page: the layout plus the page.
type pages struct{ m map[string]*template.Template }

var funcs = template.FuncMap{
	"money": func(cents int64) string { return rules.FormatBRL(cents) },
	"add":   func(a, b int) int { return a + b },
	"decimal": func(f float64) string {
		return strings.Replace(fmt.Sprintf("%.1f", f), ".", ",", 1)
	},
	"sub": func(a, b int) int { return a - b },
	"date": func(iso string) string {
		if t, err := time.Parse("2006-01-02", iso); err == nil {
			return t.Format("02/01/2006")
		}
		if t, err := time.Parse(time.RFC3339Nano, iso); err == nil {
			return t.In(rules.SaoPaulo).Format("02/01/2006 15:04")
		}
		return iso
	},
	"month":   func(ym string) string { return rules.FormatMonth("pt", ym) },
	"problem": problemText,
	"pct": func(a, b int) int {
		if b <= 0 {
			return 0
		}
		return a * 100 / b
	},
}

// problemText is a row's problem as the run page says it, in English when
// en: a problem at a CNAB title's positions says where first ("linha 9,
// posições 78–85 (Data de vencimento do título): …"); a sheet's is in its
// row, under its columns, already.
func problemText(p results.Problem, en bool) string {
	lang, msg := "pt", p.Message
	if en {
		lang = "en"
		if p.MessageEN != "" {
			msg = p.MessageEN
		}
	}
	if _, _, _, ok := formats.ParsePositionColumn(p.Column); ok {
		return formats.Place(lang, 0, p.Column, p.Header) + ": " + msg
	}
	return msg
}

func loadPages() (*pages, error) {
	p := &pages{m: map[string]*template.Template{}}
	// blocks a page includes, one file each
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/steps.html", "templates/quemdeve.html", "templates/lembretes.html", "templates/reguaform.html")
	if err != nil {
		return nil, fmt.Errorf("modelos: %w", err)
	}
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".html")
		if name == "layout" || name == "steps" || name == "quemdeve" || name == "lembretes" || name == "reguaform" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("modelo %s: %w", f, err)
		}
		p.m[name] = t
	}
	return p, nil
}

// Page is what every template receives.
type Page struct {
	Title  string
	Lang   string
	User   *User
	CSRF   string
	Path   string
	Flash  string
	Error  string
	Status int
	Data   any
}

// T translates key into the page's language.
func (p *Page) T(key string) string { return tr(p.Lang, key) }

// Tf translates key and formats it with args.
func (p *Page) Tf(key string, args ...any) string { return fmt.Sprintf(tr(p.Lang, key), args...) }

// PageWith is a value handed to a sub-template together with its page
// (for the page's texts): {{template "x" ($p.With .)}}.
type PageWith struct {
	P *Page
	R any
}

// With pairs the page with v for a sub-template.
func (p *Page) With(v any) PageWith { return PageWith{P: p, R: v} }

// RowStates is the JSON object of the journal's row states in the page's
// language (the run page's script labels the database's row counts with it).
func (p *Page) RowStates() string {
	m := map[string]string{}
	for _, s := range []string{"pending", "sending", "created", "issued", "denied", "ambiguous"} {
		m[s] = tr(p.Lang, "rowstate."+s)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Can reports whether the page's user has role r.
func (p *Page) Can(r string) bool { return p.User != nil && p.User.Role.Allows(Role(r)) }

// EN reports whether the page is in English.
func (p *Page) EN() bool { return p.Lang == "en" }

func (s *Server) page(r *http.Request, ss *session, title string, data any) *Page {
	p := &Page{Title: title, Lang: langOf(r), Path: r.URL.Path, Data: data, Status: http.StatusOK}
	if ss != nil {
		u := ss.User
		p.User, p.CSRF = &u, ss.CSRF
	}
	if f := r.URL.Query().Get("ok"); f != "" && len(f) < 40 {
		p.Flash = tr(p.Lang, "flash."+f)
	}
	return p
}

// render writes page name with p; a template failure is logged and shown
// as the plain error page (the buffer keeps a half page from going out).
func (s *Server) render(w http.ResponseWriter, name string, p *Page) {
	t := s.pages.m[name]
	var buf bytes.Buffer
	if t == nil {
		s.log.Error().Str("page", name).Msg("modelo inexistente")
		buf.WriteString(msgInternal)
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(buf.Bytes())
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		s.log.Error().Err(err).Str("page", name).Msg("modelo")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(msgInternal))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if p.Status != 0 {
		w.WriteHeader(p.Status)
	}
	w.Write(buf.Bytes())
}

// fail answers with a plain page saying msg (never an internal detail).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.Contains(r.Header.Get("Accept"), "application/json") || r.Header.Get("X-Requested-With") != "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "{\"erro\":%q}\n", msg)
		return
	}
	ss, _ := s.sessionFrom(r)
	p := s.page(r, ss, tr(langOf(r), "err.title"), nil)
	p.Error, p.Status = msg, status
	s.render(w, "error", p)
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// safeReturn keeps a post-login redirect on this site.
func safeReturn(v string) string {
	if v == "" || !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") || strings.HasPrefix(v, "/\\") {
		return "/"
	}
	return v
}
