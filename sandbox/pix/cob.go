package pix

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"remessa/rules"
	"remessa/sandbox/store"
)

// merchantCity is the city in the BR Codes of sandbox accounts (accounts
// have no address).
const merchantCity = "SAO PAULO"

// The address every sandbox account answers as the recebedor of a cobv:
// the spec gives recebedor the devedor's shape (logradouro, cidade, uf,
// cep) with cnpj, and accounts have no address of their own.
const (
	recebedorLogradouro = "Avenida Paulista, 1000"
	recebedorCidade     = "São Paulo"
	recebedorUF         = "SP"
	recebedorCEP        = "01310100"
)

// newTxid returns a random 32-character txid (POST /v2/cob).
func newTxid() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// locationFor is the payload location of a charge: host + /v2/{tipo}/ + 32
// hex characters derived from the account and loc id (no scheme).
func locationFor(host, account, kind string, locID int64) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", account, locID)))
	loc := host + "/v2/" + kind + "/" + hex.EncodeToString(h[:16])
	if len(loc) > 77 {
		// Keep the location within the BR Code limit by shortening the host.
		loc = loc[len(loc)-77:]
	}
	return loc
}

func merchantName(name string) string {
	if name == "" {
		return "SANDBOX"
	}
	for utf8.RuneCountInString(name) > 25 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return strings.TrimSpace(name)
}

// newCharge builds a charge of kind from a checked request.
func newCharge(ai accountInfo, kind, txid string, in *cobInput, now time.Time, locID int64, host string) (*charge, error) {
	b := in.Body
	b.Txid = txid
	b.Revisao = 0
	b.Status = StatusAtiva
	b.Calendario.Criacao = ts(now)
	loc := locationFor(host, ai.ID, kind, locID)
	b.Loc = &Loc{ID: locID, Location: loc, TipoCob: kind, Criacao: ts(now)}
	b.Location = loc
	b.Valor.Original = rules.FormatPixAmount(in.Cents)
	if kind == kindCobV {
		b.Recebedor = &Pessoa{CNPJ: rules.CleanDocument(ai.CNPJ), Nome: ai.Name, Logradouro: recebedorLogradouro,
			Cidade: recebedorCidade, UF: recebedorUF, CEP: recebedorCEP}
	}
	code, err := rules.BRCode{Dynamic: true, URL: loc, MerchantName: merchantName(ai.Name), MerchantCity: merchantCity}.Encode()
	if err != nil {
		return nil, fmt.Errorf("pix: BR Code of %s: %w", txid, err)
	}
	b.PixCopiaECola = code
	return &charge{Kind: kind, Created: now, Cents: in.Cents, Body: b}, nil
}

// revise applies a checked revision request to an existing charge.
func revise(c *charge, in *cobInput, now time.Time) *charge {
	n := *c
	b := in.Body
	b.Txid = c.Body.Txid
	b.Revisao = c.Body.Revisao + 1
	b.Status = c.Body.Status
	b.Calendario.Criacao = c.Body.Calendario.Criacao
	b.Loc = c.Body.Loc
	b.Location = c.Body.Location
	b.Recebedor = c.Body.Recebedor
	b.PixCopiaECola = c.Body.PixCopiaECola
	b.Valor.Original = rules.FormatPixAmount(in.Cents)
	n.Body = b
	n.Cents = in.Cents
	return &n
}

// allocLocs reserves n loc ids in tx and returns the first.
func allocLocs(tx *store.Tx, n int) (int64, error) {
	first, err := tx.NextSeq("pix.loc")
	if err != nil || n <= 1 {
		return first, err
	}
	return first, tx.SetSeq("pix.loc", first+int64(n)-1)
}

func (m *Module) ownKeys(ai accountInfo) keyChecker { return ai.ownsKey }

// createCharge handles PUT /v2/cob/{txid}, POST /v2/cob and
// PUT /v2/cobv/{txid}. Errors are in the cob (Efí) or cobv (problem)
// dialect.
func (m *Module) createCharge(ctx context.Context, ai accountInfo, kind, txid, host string, body []byte) (*Cob, *apiError) {
	efi := kind == kindCob
	fail := func(vs []Violacao) *apiError {
		if efi {
			return asEfi(vs)
		}
		return problem(http.StatusBadRequest, tCobVInvalida, titleCobV, "A requisição que busca criar uma cobrança não respeita o schema ou está semanticamente errada.", vs)
	}
	if !rules.ValidTxid(txid) {
		return nil, fail([]Violacao{{Razao: "txid deve ter de 26 a 35 caracteres alfanuméricos [a-zA-Z0-9]", Propriedade: "txid", Valor: txid}})
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, fail([]Violacao{{Razao: "JSON inválido: " + err.Error(), Propriedade: ""}})
	}
	s := cobCreateS
	if kind == kindCobV {
		s = cobvCreateS
	}
	in, vs := checkCob(v, s, kind, "", m.ownKeys(ai))
	if len(vs) > 0 {
		return nil, fail(vs)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.a(ai.ID)
	if _, ok := a.charges[txid]; ok {
		if efi {
			return nil, efiErr(http.StatusConflict, "txid_duplicado", "Campo txid "+quote(txid)+" já foi utilizado por outra cobrança")
		}
		p := problem(http.StatusConflict, tCobVInvalida, "Cobrança já existe.", "txid "+txid+" já foi utilizado por outra cobrança.", []Violacao{{Razao: "txid já utilizado", Propriedade: "txid", Valor: txid}})
		p.p.Nome, p.p.Mensagem = "txid_duplicado", "Campo txid "+quote(txid)+" já foi utilizado por outra cobrança"
		return nil, p
	}
	if lid, ok := a.claims[txid]; ok && a.lotes[lid] != nil && a.lotes[lid].itemStatus(txid) == ItemProcessando {
		if efi {
			return nil, efiErr(http.StatusConflict, "txid_duplicado", "Campo txid "+quote(txid)+" está em processamento no lote "+lid)
		}
		return nil, problem(http.StatusConflict, tCobVInvalida, "Cobrança em processamento.", "txid "+txid+" está em processamento no lote "+lid+".", []Violacao{{Razao: "txid em processamento em um lote", Propriedade: "txid", Valor: txid}})
	}
	now := m.clk.Now()
	var c *charge
	err = m.st.Tx(ctx, func(tx *store.Tx) error {
		locID, err := allocLocs(tx, 1)
		if err != nil {
			return err
		}
		c, err = newCharge(ai, kind, txid, in, now, locID, host)
		if err != nil {
			return err
		}
		return tx.Put(storeCharge, ai.ID, txid, c)
	})
	if err != nil {
		m.log.Error().Err(err).Msg("pix: create charge")
		return nil, internal(err)
	}
	a.charges[txid] = c
	a.byLoc[c.Body.Location] = txid
	out := m.view(a, c)
	return &out, nil
}

// view is the answer for a charge (with its received Pix).
func (m *Module) view(a *acct, c *charge) Cob {
	b := c.Body
	for _, e2e := range c.Paid {
		if p, ok := a.pix[e2e]; ok {
			b.Pix = append(b.Pix, p.Body)
		}
	}
	return b
}

// patchCharge handles PATCH /v2/cob/{txid} and /v2/cobv/{txid}.
func (m *Module) patchCharge(ctx context.Context, ai accountInfo, kind, txid string, body []byte) (*Cob, *apiError) {
	efi := kind == kindCob
	fail := func(vs []Violacao) *apiError {
		if efi {
			return asEfi(vs)
		}
		return problem(http.StatusBadRequest, tCobVInvalida, titleCobV, "A requisição que busca alterar uma cobrança não respeita o schema ou está semanticamente errada.", vs)
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, fail([]Violacao{{Razao: "JSON inválido: " + err.Error()}})
	}
	ps := cobPatchS
	if kind == kindCobV {
		ps = cobvPatchS
	}
	var vs []Violacao
	ps.check("", v, &vs)
	if len(vs) > 0 {
		return nil, fail(vs)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.a(ai.ID)
	c, ok := a.charges[txid]
	if !ok || c.Kind != kind {
		return nil, m.chargeNotFound(kind, txid)
	}
	nc, e := m.applyPatch(ai, c, v.(map[string]any), "", m.clk.Now())
	if e != nil {
		return nil, e
	}
	if err := m.st.Tx(ctx, func(tx *store.Tx) error { return tx.Put(storeCharge, ai.ID, txid, nc) }); err != nil {
		return nil, internal(err)
	}
	a.charges[txid] = nc
	out := m.view(a, nc)
	return &out, nil
}

// applyPatch merges a (schema-checked) patch into charge c and returns the
// revised charge; prefix names the body in violations (batch items).
func (m *Module) applyPatch(ai accountInfo, c *charge, patch map[string]any, prefix string, now time.Time) (*charge, *apiError) {
	efi := c.Kind == kindCob && prefix == ""
	if c.Body.Status != StatusAtiva {
		if efi {
			return nil, efiErr(http.StatusBadRequest, "cobranca_nao_ativa", "A cobrança "+c.Body.Txid+" não encontra-se mais com o status ATIVA (status "+c.Body.Status+")")
		}
		return nil, problem(http.StatusBadRequest, tCobVInvalida, titleCobV, "Cobrança não encontra-se mais com o status ATIVA.",
			[]Violacao{{Razao: "cobrança com status " + c.Body.Status + " não pode ser alterada", Propriedade: join(prefix, "status"), Valor: c.Body.Status}})
	}
	delete(patch, "txid")
	if st, ok := patch["status"]; ok {
		delete(patch, "status")
		_ = st // only REMOVIDA_PELO_USUARIO_RECEBEDOR passes the schema
		n := *c
		n.Body.Status = StatusRemovidaUser
		n.Body.Revisao++
		if len(patch) > 0 {
			// Other fields in the same request are applied too.
			r, e := m.applyPatch(ai, c, patch, prefix, now)
			if e != nil {
				return nil, e
			}
			n = *r
			n.Body.Status = StatusRemovidaUser
		}
		return &n, nil
	}
	merged := mergePatch(requestView(c.Body, c.Kind), patch)
	s := cobCreateS
	if c.Kind == kindCobV {
		s = cobvCreateS
	}
	in, vs := checkCob(merged, s, c.Kind, prefix, ai.ownsKey)
	if len(vs) > 0 {
		if efi {
			return nil, asEfi(vs)
		}
		return nil, problem(http.StatusBadRequest, tCobVInvalida, titleCobV, "A requisição que busca alterar uma cobrança não respeita o schema ou está semanticamente errada.", vs)
	}
	return revise(c, in, now), nil
}

func (m *Module) chargeNotFound(kind, txid string) *apiError {
	if kind == kindCob {
		return efiErr(http.StatusNotFound, "cobranca_nao_encontrada", "Nenhuma cobrança encontrada para o txid "+quote(txid))
	}
	return notFound("Cobrança " + txid + " não encontrada.")
}

// getCharge handles GET /v2/cob/{txid} and /v2/cobv/{txid} (?revisao is
// accepted and must not exceed the current revision).
func (m *Module) getCharge(accountID, kind, txid string) (*Cob, *apiError) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a := m.peek(accountID)
	if a == nil {
		return nil, m.chargeNotFound(kind, txid)
	}
	c, ok := a.charges[txid]
	if !ok || c.Kind != kind {
		return nil, m.chargeNotFound(kind, txid)
	}
	out := m.view(a, c)
	return &out, nil
}
