package pix

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/httpx"
)

// Body limits: a 1000-item batch is about 340 KB.
const (
	maxBody     = 1 << 20
	maxLoteBody = 8 << 20
)

// Scopes per route. Batches accept both readings of the scope table: the
// central bank's (lotecobv.write to change, lotecobv.read to query) and
// the spec's inverted one, so every lotecobv route takes either scope.
var (
	scCobWrite   = []string{"cob.write"}
	scCobRead    = []string{"cob.read", "cob.write"}
	scCobVWrite  = []string{"cobv.write", "cob.write"}
	scCobVRead   = []string{"cobv.read", "cob.read", "cobv.write", "cob.write"}
	scLote       = []string{"lotecobv.write", "lotecobv.read"}
	scSplitWrite = []string{"gn.split.write"}
	scSplitRead  = []string{"gn.split.read"}
	scPixRead    = []string{"pix.read"}
	scPixWrite   = []string{"pix.write"}
	scPixSend    = []string{"pix.send"}
	scSendRead   = []string{"gn.pix.send.read"}
	scHookWrite  = []string{"webhook.write"}
	scHookRead   = []string{"webhook.read"}
	scEVPWrite   = []string{"gn.pix.evp.write"}
	scEVPRead    = []string{"gn.pix.evp.read"}
)

type handler func(w http.ResponseWriter, r *http.Request, ai accountInfo)

// Register mounts the Pix routes and the payment control route.
func (m *Module) Register(mux httpx.Mux) {
	h := func(pattern string, scopes []string, fn handler) {
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := auth.FromContext(r.Context())
			if !ok {
				writeErr(w, problem(http.StatusUnauthorized, "NaoAutorizado", "Não autorizado", "Token de acesso ausente.", nil))
				return
			}
			fn(w, r, accountInfo{ID: p.AccountID, Name: p.Name, CNPJ: p.CNPJ, Conta: p.Conta, Keys: p.Keys})
		})
		if m.auth != nil {
			mux.Handle(pattern, m.auth.Pix(scopes, inner))
		} else {
			mux.Handle(pattern, inner)
		}
	}
	// Immediate charges.
	h("PUT /v2/cob/{txid}", scCobWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		m.create(w, r, ai, kindCob, r.PathValue("txid"))
	})
	h("POST /v2/cob", scCobWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		m.create(w, r, ai, kindCob, newTxid())
	})
	h("PATCH /v2/cob/{txid}", scCobWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) { m.patch(w, r, ai, kindCob) })
	h("GET /v2/cob/{txid}", scCobRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) { m.get(w, r, ai, kindCob) })
	h("GET /v2/cob", scCobRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listCharges(r.Context(), ai.ID, kindCob, r.URL.Query()))
	})
	// Due-date charges.
	h("PUT /v2/cobv/{txid}", scCobVWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		m.create(w, r, ai, kindCobV, r.PathValue("txid"))
	})
	h("PATCH /v2/cobv/{txid}", scCobVWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) { m.patch(w, r, ai, kindCobV) })
	h("GET /v2/cobv/{txid}", scCobVRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) { m.get(w, r, ai, kindCobV) })
	h("GET /v2/cobv", scCobVRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listCharges(r.Context(), ai.ID, kindCobV, r.URL.Query()))
	})
	// Batches.
	h("PUT /v2/lotecobv/{id}", scLote, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		body, e := readBody(w, r, maxLoteBody)
		if e == nil {
			e = m.putLote(r.Context(), ai, r.PathValue("id"), hostOf(m.base(r)), body)
		}
		noContent(w, http.StatusAccepted, e)
	})
	h("PATCH /v2/lotecobv/{id}", scLote, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		body, e := readBody(w, r, maxLoteBody)
		if e == nil {
			e = m.patchLote(r.Context(), ai, r.PathValue("id"), body)
		}
		noContent(w, http.StatusAccepted, e)
	})
	h("GET /v2/lotecobv/{id}", scLote, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		b, e := m.getLote(r.Context(), ai.ID, r.PathValue("id"))
		if e != nil {
			writeErr(w, e)
			return
		}
		writeRaw(w, http.StatusOK, b)
	})
	h("GET /v2/lotecobv", scLote, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listLotes(r.Context(), ai.ID, r.URL.Query()))
	})
	// Split.
	h("POST /v2/gn/split/config", scSplitWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		withBody(w, r, http.StatusCreated, func(body []byte) (any, *apiError) { return m.saveSplit(r.Context(), ai, newTxid(), body) })
	})
	h("PUT /v2/gn/split/config/{id}", scSplitWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		id := r.PathValue("id")
		if !reSplitID.MatchString(id) {
			writeErr(w, splitProblem("id inválido.", []Violacao{{Razao: "deve ter de 1 a 35 caracteres alfanuméricos", Propriedade: "id", Valor: id}}))
			return
		}
		withBody(w, r, http.StatusCreated, func(body []byte) (any, *apiError) { return m.saveSplit(r.Context(), ai, id, body) })
	})
	h("GET /v2/gn/split/config/{id}", scSplitRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.getSplit(r.Context(), ai.ID, r.PathValue("id"), r.URL.Query().Get("revisao")))
	})
	for _, kind := range []string{kindCob, kindCobV} {
		h("PUT /v2/gn/split/"+kind+"/{txid}/vinculo/{splitConfigId}", scSplitWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
			noContent(w, http.StatusNoContent, m.linkSplit(r.Context(), ai.ID, kind, r.PathValue("txid"), r.PathValue("splitConfigId")))
		})
		h("DELETE /v2/gn/split/"+kind+"/{txid}/vinculo", scSplitWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
			noContent(w, http.StatusOK, m.unlinkSplit(r.Context(), ai.ID, kind, r.PathValue("txid")))
		})
		h("GET /v2/gn/split/"+kind+"/{txid}", scSplitRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
			answer(w, http.StatusOK)(m.getCobSplit(r.Context(), ai.ID, kind, r.PathValue("txid")))
		})
	}
	// Received Pix and refunds.
	h("GET /v2/pix/{e2eId}", scPixRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.getPix(r.Context(), ai.ID, r.PathValue("e2eId")))
	})
	h("GET /v2/pix", scPixRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listPix(r.Context(), ai.ID, r.URL.Query()))
	})
	h("PUT /v2/pix/{e2eId}/devolucao/{id}", scPixWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		withBody(w, r, http.StatusCreated, func(body []byte) (any, *apiError) {
			return m.putRefund(r.Context(), ai.ID, r.PathValue("e2eId"), r.PathValue("id"), body)
		})
	})
	h("GET /v2/pix/{e2eId}/devolucao/{id}", scPixRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.getRefund(r.Context(), ai.ID, r.PathValue("e2eId"), r.PathValue("id")))
	})
	// Sending.
	for _, v := range []string{"v2", "v3"} {
		h("PUT /"+v+"/gn/pix/{idEnvio}", scPixSend, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
			withBody(w, r, http.StatusCreated, func(body []byte) (any, *apiError) { return m.putSend(r.Context(), ai, r.PathValue("idEnvio"), body) })
		})
	}
	h("GET /v2/gn/pix/enviados/{e2eId}", scSendRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.getSendByE2E(r.Context(), ai.ID, r.PathValue("e2eId")))
	})
	h("GET /v2/gn/pix/enviados/id-envio/{idEnvio}", scSendRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.getSendByID(r.Context(), ai.ID, r.PathValue("idEnvio")))
	})
	h("GET /v2/gn/pix/enviados", scSendRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listSends(r.Context(), ai.ID, r.URL.Query()))
	})
	// Webhooks.
	h("PUT /v2/webhook/{chave}", scHookWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		withBody(w, r, http.StatusOK, func(body []byte) (any, *apiError) { return m.putWebhook(r.Context(), ai, r.PathValue("chave"), body) })
	})
	h("GET /v2/webhook/{chave}", scHookRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.getWebhook(r.Context(), ai, r.PathValue("chave")))
	})
	h("DELETE /v2/webhook/{chave}", scHookWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		noContent(w, http.StatusNoContent, m.deleteWebhook(r.Context(), ai, r.PathValue("chave")))
	})
	h("GET /v2/webhook", scHookRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listWebhooks(r.Context(), ai.ID, r.URL.Query()))
	})
	// EVP keys.
	h("POST /v2/gn/evp", scEVPWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusCreated)(m.createEVP(r.Context(), ai))
	})
	h("GET /v2/gn/evp", scEVPRead, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		answer(w, http.StatusOK)(m.listEVP(ai))
	})
	h("DELETE /v2/gn/evp/{chave}", scEVPWrite, func(w http.ResponseWriter, r *http.Request, ai accountInfo) {
		noContent(w, http.StatusNoContent, m.deleteEVP(r.Context(), ai, r.PathValue("chave")))
	})
	// Control: pay a charge (not part of the real API; loopback only).
	mux.HandleFunc("POST /sandbox/pix/pay", m.handlePay)
}

// answer returns a function writing (v, e): e as an error, else v with
// status.
func answer(w http.ResponseWriter, status int) func(v any, e *apiError) {
	return func(v any, e *apiError) {
		if e != nil {
			writeErr(w, e)
			return
		}
		writeJSON(w, status, v)
	}
}

// noContent writes e or an empty answer with status.
func noContent(w http.ResponseWriter, status int, e *apiError) {
	if e != nil {
		writeErr(w, e)
		return
	}
	w.WriteHeader(status)
}

// withBody reads the request body (at most maxBody bytes) and answers
// status with what fn makes of it, or the problem either step gives.
func withBody(w http.ResponseWriter, r *http.Request, status int, fn func(body []byte) (any, *apiError)) {
	body, e := readBody(w, r, maxBody)
	if e != nil {
		writeErr(w, e)
		return
	}
	answer(w, status)(fn(body))
}

// readBody reads at most limit bytes of the request body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *apiError) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, problem(http.StatusRequestEntityTooLarge, tRequisicao, "Requisição muito grande.", fmt.Sprintf("O corpo excede %d bytes.", limit), nil)
		}
		return nil, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Corpo da requisição ilegível.", nil)
	}
	return b, nil
}

func (m *Module) create(w http.ResponseWriter, r *http.Request, ai accountInfo, kind, txid string) {
	body, e := readBody(w, r, maxBody)
	if e != nil {
		writeErr(w, e)
		return
	}
	answer(w, http.StatusCreated)(m.createCharge(r.Context(), ai, kind, txid, hostOf(m.base(r)), body))
}

func (m *Module) patch(w http.ResponseWriter, r *http.Request, ai accountInfo, kind string) {
	withBody(w, r, http.StatusOK, func(body []byte) (any, *apiError) {
		return m.patchCharge(r.Context(), ai, kind, r.PathValue("txid"), body)
	})
}

func (m *Module) get(w http.ResponseWriter, r *http.Request, ai accountInfo, kind string) {
	c, e := m.getCharge(r.Context(), ai.ID, kind, r.PathValue("txid"))
	if e == nil {
		if s := r.URL.Query().Get("revisao"); s != "" {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil || n < 0 || n > c.Revisao {
				e = m.chargeNotFound(kind, r.PathValue("txid"))
			}
		}
	}
	answer(w, http.StatusOK)(c, e)
}

// PayRequest is the body of POST /sandbox/pix/pay.
type PayRequest struct {
	Txid          string `json:"txid,omitempty"`
	PixCopiaECola string `json:"pixCopiaECola,omitempty"`
	Valor         string `json:"valor,omitempty"`
	Conta         string `json:"conta,omitempty"` // Pix account number, when a txid exists in several accounts
}

func (m *Module) handlePay(w http.ResponseWriter, r *http.Request) {
	var req PayRequest
	if de := httpx.DecodeStrict(r, &req); de != nil {
		httpx.ProblemDecodeError(w, de, tRequisicao)
		return
	}
	ref := req.Txid
	if ref == "" {
		ref = req.PixCopiaECola
	}
	if ref == "" || (req.Txid != "" && req.PixCopiaECola != "") {
		writeErr(w, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Informe txid ou pixCopiaECola (um dos dois).", []Violacao{{Razao: "informe txid ou pixCopiaECola", Propriedade: "txid"}}))
		return
	}
	var cents int64
	if req.Valor != "" {
		var err error
		if cents, err = rules.ParsePixAmount(req.Valor); err != nil || cents <= 0 {
			writeErr(w, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "valor inválido.", []Violacao{{Razao: "deve ser maior que zero no formato 123.45", Propriedade: "valor", Valor: short(req.Valor)}}))
			return
		}
	}
	account := ""
	if req.Conta != "" {
		a, ok := m.auth.AccountByConta(req.Conta)
		if !ok {
			writeErr(w, notFound("Conta "+short(req.Conta)+" não encontrada."))
			return
		}
		account = a.ID
	}
	res, err := m.pay(r.Context(), account, ref, cents)
	switch {
	case errors.Is(err, ErrChargeNotFound):
		writeErr(w, notFound(err.Error()))
	case errors.Is(err, ErrNotPayable):
		writeErr(w, problem(http.StatusBadRequest, tCobInvalida, "Cobrança não pode ser paga.", err.Error(), nil))
	case err != nil:
		writeErr(w, internal(err))
	default:
		writeJSON(w, http.StatusCreated, res)
	}
}

// EVP keys live in the account (sandbox/auth); these routes add, list and
// remove random keys.

// EVPList is the answer of GET /v2/gn/evp.
type EVPList struct {
	Chaves []string `json:"chaves"`
}

func (m *Module) createEVP(ctx context.Context, ai accountInfo) (*struct {
	Chave string `json:"chave"`
}, *apiError) {
	k := auth.NewEVP()
	if err := m.auth.AddKey(ctx, ai.ID, k); err != nil {
		return nil, internal(err)
	}
	return &struct {
		Chave string `json:"chave"`
	}{k}, nil
}

func (m *Module) listEVP(ai accountInfo) (*EVPList, *apiError) {
	out := &EVPList{Chaves: []string{}}
	a, ok := m.auth.Account(ai.ID)
	if !ok {
		return out, nil
	}
	for _, k := range a.Keys {
		if t, err := rules.PixKeyType(k); err == nil && t == rules.KeyEVP {
			out.Chaves = append(out.Chaves, k)
		}
	}
	return out, nil
}

func (m *Module) deleteEVP(ctx context.Context, ai accountInfo, chave string) *apiError {
	a, ok := m.auth.Account(ai.ID)
	found := false
	if ok {
		for _, k := range a.Keys {
			if t, err := rules.PixKeyType(k); err == nil && t == rules.KeyEVP && auth.NormalizeKey(k) == auth.NormalizeKey(chave) {
				found = true
			}
		}
	}
	if !found {
		return notFound("Chave aleatória " + chave + " não encontrada.")
	}
	if err := m.auth.RemoveKey(ctx, ai.ID, chave); err != nil {
		return internal(err)
	}
	return nil
}
