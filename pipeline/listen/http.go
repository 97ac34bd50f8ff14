package listen

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/rs/zerolog"

	"remessa/internal/health"
	"remessa/internal/metrics"
)

// maxBody is the largest delivery read (a Pix webhook carries at most a
// few Pix; a notification a token).
const maxBody = 4 << 20

// Handler receives deliveries:
//
//   - POST /notificacao (and any path under it): the charges API's
//     notification, form field notification=<token>;
//   - POST /pix, /webhook/pix, /<anything>/pix: a Pix webhook,
//     {"pix":[...]} (the real service appends /pix to the registered URL);
//     a JSON body on any of these paths is read as a Pix webhook (a URL
//     registered with ?ignorar= is posted to as is);
//   - GET /: the inbox's counts as JSON.
//
// Each delivery is committed to the inbox before it is answered 200; a
// failure to keep it answers 500 so the service posts it again.
//
// GET /healthz, GET /readyz (listen.db answers; the service when one is
// configured) and GET /metrics are for operators (docs/operations.md).
func (l *Listener) Handler() http.Handler {
	ops := http.NewServeMux()
	checks := []health.Check{{Name: "banco", Fail: "a caixa de entrada (listen.db) não responde", Run: l.db.PingContext}}
	if l.opts.Run.BaseURL != "" {
		checks = append(checks, health.Check{Name: "servico", Fail: "o serviço de cobranças não responde",
			Run: health.Reachable(&http.Client{Timeout: health.Timeout}, l.opts.Run.BaseURL)})
	}
	health.Mount(ops, zerolog.Nop(), checks...)
	ops.Handle("GET /metrics", metrics.Handler())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			ops.ServeHTTP(w, r)
			return
		}
		l.serveHTTP(w, r)
	})
}

// sourceOf is an inbox kind as the metrics name it: "charges" or "pix".
func sourceOf(kind string) string {
	if kind == KindPix {
		return "pix"
	}
	return "charges"
}

func (l *Listener) serveHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	notif := p == "/notificacao" || strings.HasPrefix(p, "/notificacao/")
	pix := p == "/pix" || strings.HasSuffix(p, "/pix")
	if r.Method == http.MethodGet && p == "/" {
		s, err := l.Stats(r.Context())
		if err != nil {
			http.Error(w, "erro interno", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s)
		return
	}
	if !notif && !pix {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "corpo grande demais ou interrompido", http.StatusRequestEntityTooLarge)
		return
	}
	trim := bytes.TrimSpace(body)
	var items []delivery
	if len(trim) > 0 && trim[0] == '{' && (pix || strings.Contains(r.Header.Get("Content-Type"), "json")) {
		items, err = pixItems(trim, p)
		if err != nil {
			http.Error(w, "webhook Pix ilegível: "+err.Error(), http.StatusBadRequest)
			return
		}
	} else {
		tok := notificationToken(trim, r.Header.Get("Content-Type"))
		if tok == "" {
			http.Error(w, "falta o campo notification", http.StatusBadRequest)
			return
		}
		items = []delivery{{kind: KindNotification, key: tok, path: p}}
	}
	if len(items) > 0 {
		if _, err := record(r.Context(), l.db, items, l.opts.now()); err != nil {
			l.logf("listen: guardar a entrega: %v", err)
			http.Error(w, "não foi possível guardar a entrega", http.StatusInternalServerError)
			return
		}
		for _, it := range items {
			metrics.NotificationReceived(sourceOf(it.kind))
		}
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	w.WriteHeader(http.StatusOK)
}

// notificationToken reads notification=<token> from a form (or a JSON
// {"notification": "..."}).
func notificationToken(body []byte, ct string) string {
	if strings.Contains(ct, "json") {
		var v struct {
			Notification string `json:"notification"`
		}
		if json.Unmarshal(body, &v) == nil {
			return strings.TrimSpace(v.Notification)
		}
		return ""
	}
	q, err := url.ParseQuery(string(body))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(q.Get("notification"))
}

// pixItems reads {"pix":[...]}: one inbox item per Pix with a txid (the
// others belong to no charge; only Pix with a txid are notified anyway).
// An empty list (the service probing the URL) is no item.
func pixItems(body []byte, path string) ([]delivery, error) {
	var v struct {
		Pix []json.RawMessage `json:"pix"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	var out []delivery
	for _, raw := range v.Pix {
		var head struct {
			EndToEndID string `json:"endToEndId"`
			Txid       string `json:"txid"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, err
		}
		if head.Txid == "" || head.EndToEndID == "" {
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			return nil, err
		}
		out = append(out, delivery{kind: KindPix, key: head.EndToEndID, body: compact.String(), path: path})
	}
	return out, nil
}
