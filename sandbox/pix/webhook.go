package pix

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"time"

	"remessa/sandbox/auth"
	"remessa/sandbox/store"
)

// Webhook is a webhook registered on a Pix key.
type Webhook struct {
	WebhookURL string `json:"webhookUrl"`
	Chave      string `json:"chave"`
	Criacao    string `json:"criacao"`
}

// webhook is the stored form.
type webhook struct {
	URL     string    `json:"url"`
	Chave   string    `json:"chave"`
	Created time.Time `json:"created"`
}

func (h *webhook) view() Webhook {
	return Webhook{WebhookURL: h.URL, Chave: h.Chave, Criacao: ts(h.Created)}
}

var webhookS = obj(req("webhookUrl", str(1, 1000)))

func hookProblem(status int, detail string, vs []Violacao) *apiError {
	return problem(status, tWebhook, "Webhook inválido.", detail, vs)
}

// putWebhook handles PUT /v2/webhook/{chave}: one URL per key, replaced
// by a new PUT. The sandbox accepts http and https URLs (it does not
// probe them).
func (m *Module) putWebhook(ctx context.Context, ai accountInfo, chave string, body []byte) (*Webhook, *apiError) {
	if !ai.ownsKey(chave) {
		return nil, hookProblem(http.StatusBadRequest, "A chave não pertence à conta.", []Violacao{{Razao: "chave não encontrada entre as chaves da conta", Propriedade: "chave", Valor: chave}})
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, hookProblem(http.StatusBadRequest, "JSON inválido.", []Violacao{{Razao: "JSON inválido: " + err.Error()}})
	}
	var vs []Violacao
	webhookS.check("", v, &vs)
	if len(vs) > 0 {
		return nil, hookProblem(http.StatusBadRequest, "A requisição não respeita o schema.", vs)
	}
	raw := v.(map[string]any)["webhookUrl"].(string)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, hookProblem(http.StatusBadRequest, "URL do webhook inválida.", []Violacao{{Razao: "deve ser uma URL absoluta http(s)://", Propriedade: "webhookUrl", Valor: raw}})
	}
	key := chaveOf(ai, chave)
	h := &webhook{URL: raw, Chave: key, Created: m.clk.Now()}
	e := m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		old, err := get(r, m.hooks, ai.ID, key)
		if err != nil {
			return storeErr(err)
		}
		if old != nil {
			h.Created = old.Created
		}
		if err := m.saveHook(tx, ai.ID, h); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if e != nil {
		return nil, e
	}
	out := h.view()
	return &out, nil
}

// chaveOf returns the account's spelling of key.
func chaveOf(ai accountInfo, key string) string {
	nk := auth.NormalizeKey(key)
	for _, k := range ai.Keys {
		if auth.NormalizeKey(k) == nk {
			return k
		}
	}
	return key
}

func (m *Module) getWebhook(ctx context.Context, ai accountInfo, chave string) (*Webhook, *apiError) {
	h, err := get(m.rd(ctx), m.hooks, ai.ID, chaveOf(ai, chave))
	if err != nil {
		return nil, internal(err)
	}
	if h != nil {
		v := h.view()
		return &v, nil
	}
	return nil, notFound("Webhook para a chave " + chave + " não encontrado.")
}

func (m *Module) deleteWebhook(ctx context.Context, ai accountInfo, chave string) *apiError {
	key := chaveOf(ai, chave)
	return m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		h, err := get(r, m.hooks, ai.ID, key)
		if err != nil {
			return storeErr(err)
		}
		if h == nil {
			return notFound("Webhook para a chave " + chave + " não encontrado.")
		}
		if err := m.hooks.Delete(tx, ai.ID, key); err != nil {
			return storeErr(err)
		}
		if err := tx.DeleteIndex(storeHook, ai.ID, key); err != nil {
			return storeErr(err)
		}
		return nil
	})
}

// WebhookList is the answer of GET /v2/webhook.
type WebhookList struct {
	Parametros Parametros `json:"parametros"`
	Webhooks   []Webhook  `json:"webhooks"`
}

func (m *Module) listWebhooks(ctx context.Context, accountID string, q url.Values) (*WebhookList, *apiError) {
	lq, e := parseList(q, false)
	if e != nil {
		return nil, e
	}
	out := &WebhookList{Webhooks: []Webhook{}}
	r := m.rd(ctx)
	ids, err := r.ids(store.Query{Kind: storeHook, Account: accountID, Where: []store.Cond{
		store.Between(store.ColN, lq.inicio.UnixNano(), lq.fim.UnixNano())}})
	if err != nil {
		return nil, internal(err)
	}
	var sel []*webhook
	for _, id := range ids {
		h, err := get(r, m.hooks, accountID, id)
		if err != nil {
			return nil, internal(err)
		}
		if h != nil {
			sel = append(sel, h)
		}
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].Chave < sel[j].Chave })
	lo, hi := lq.window(len(sel))
	for _, h := range sel[lo:hi] {
		out.Webhooks = append(out.Webhooks, h.view())
	}
	out.Parametros = lq.params
	return out, nil
}
