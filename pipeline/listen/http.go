package listen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	if n, status := l.Receive(w, r, Delivery{Pix: pix}); status == http.StatusOK && n > 0 {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// Delivery says how Receive reads a request.
type Delivery struct {
	// Scope is the scope the delivery came for (the desk's service
	// account, named by the secret path it was posted to); "" for
	// `remessa listen`.
	Scope string
	// Path is kept with each item (its last element names the run folder
	// whose service is asked first); "" keeps the request's path. The
	// desk gives one without its secret.
	Path string
	// Pix says the request is a Pix webhook; otherwise it is a charges
	// notification (notification=<token>), unless its body is JSON with
	// a JSON content type, which is read as a webhook too (a webhook URL
	// registered with ?ignorar= is posted to as is).
	Pix bool
}

// Receive reads one delivery from r, keeps its items in the inbox and
// answers it: 200 once they are committed (in one durable transaction
// with the deliveries that arrived while the previous commit was under
// way), 405 for a method other than POST, 413 for a body over
// Options.MaxBody, 400 for a body that is not a delivery, 500 when it
// could not be kept and 503 when the listener is closing (the service
// posts it again). It returns how many items were kept (none for a
// webhook's empty probe) and the status it answered.
func (l *Listener) Receive(w http.ResponseWriter, r *http.Request, d Delivery) (int, int) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return 0, http.StatusMethodNotAllowed
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.opts.MaxBody))
	if err != nil {
		http.Error(w, "corpo grande demais ou interrompido", http.StatusRequestEntityTooLarge)
		return 0, http.StatusRequestEntityTooLarge
	}
	path := d.Path
	if path == "" {
		path = r.URL.Path
	}
	trim := bytes.TrimSpace(body)
	var items []delivery
	if len(trim) > 0 && trim[0] == '{' && (d.Pix || strings.Contains(r.Header.Get("Content-Type"), "json")) {
		items, err = pixItems(trim, path)
		if err != nil {
			http.Error(w, "webhook Pix ilegível: "+err.Error(), http.StatusBadRequest)
			return 0, http.StatusBadRequest
		}
	} else {
		tok := notificationToken(trim, r.Header.Get("Content-Type"))
		if tok == "" {
			http.Error(w, "falta o campo notification", http.StatusBadRequest)
			return 0, http.StatusBadRequest
		}
		if len(tok) > maxToken {
			http.Error(w, "campo notification longo demais", http.StatusBadRequest)
			return 0, http.StatusBadRequest
		}
		items = []delivery{{kind: KindNotification, key: tok, path: path}}
	}
	for i := range items {
		items[i].scope = d.Scope
	}
	if len(items) > 0 {
		if err := l.keep(r.Context(), items); err != nil {
			if errors.Is(err, errClosing) {
				http.Error(w, "o receptor está parando; envie de novo", http.StatusServiceUnavailable)
				return 0, http.StatusServiceUnavailable
			}
			l.logf("listen: guardar a entrega: %v", err)
			http.Error(w, "não foi possível guardar a entrega", http.StatusInternalServerError)
			return 0, http.StatusInternalServerError
		}
		for _, it := range items {
			metrics.NotificationReceived(sourceOf(it.kind))
		}
	}
	w.WriteHeader(http.StatusOK)
	return len(items), http.StatusOK
}

// maxToken is the longest notification token kept (the service's are
// 36 characters).
const maxToken = 200

var errClosing = errors.New("listen: o receptor está parando")

// commitReq is one delivery waiting for the committer.
type commitReq struct {
	items []delivery
	done  chan error
}

// maxGroup bounds the deliveries of one commit (a variable for the
// benchmark that compares one commit per delivery).
var maxGroup = 512

// keep commits items to the inbox and returns once they are durable. The
// deliveries waiting while a commit is under way go into the next one
// together (group commit): one fsync for all of them, each answered only
// after its own transaction committed.
func (l *Listener) keep(ctx context.Context, items []delivery) error {
	req := commitReq{items: items, done: make(chan error, 1)}
	select {
	case l.commits <- req:
	case <-l.stop:
		return errClosing
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-req.done // the committer answers every request it took
}

// committer commits the deliveries handed to keep until Close.
func (l *Listener) committer() {
	defer close(l.committed)
	for {
		var first commitReq
		select {
		case first = <-l.commits:
		case <-l.stop:
			return
		}
		group := []commitReq{first}
		items := first.items
	more:
		for len(group) < maxGroup {
			select {
			case c := <-l.commits:
				group = append(group, c)
				items = append(items, c.items...)
			default:
				break more
			}
		}
		_, err := record(context.Background(), l.db, items, l.opts.now())
		for _, c := range group {
			c.done <- err
		}
	}
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
