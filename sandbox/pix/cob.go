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
//
// ordered selects the form of locations made since seqLocOrdered: the
// loc id in 16 hex digits, then 16 of the hash, so the aliases of new
// locations are written in order (appended to the alias b-tree) instead
// of at random places across it, each dirtying another page of a tree
// that grows with the charges stored. Locations made before keep theirs.
func locationFor(host, account, kind string, locID int64, ordered bool) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", account, locID)))
	var last string
	if ordered {
		last = fmt.Sprintf("%016x", uint64(locID)) + hex.EncodeToString(h[:8])
	} else {
		last = hex.EncodeToString(h[:16])
	}
	loc := host + "/v2/" + kind + "/" + last
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
func newCharge(ai accountInfo, kind, txid string, in *cobInput, now time.Time, locID int64, host string, orderedFrom int64) (*charge, error) {
	c := chargeOf(kind, txid, in, now, locID, host)
	if err := c.derive(ai, txid, orderedFrom); err != nil {
		return nil, err
	}
	return c, nil
}

// chargeOf is newCharge but for the derived fields.
func chargeOf(kind, txid string, in *cobInput, now time.Time, locID int64, host string) *charge {
	b := in.Body
	b.Txid = txid
	b.Revisao = 0
	b.Status = StatusAtiva
	b.Valor.Original = rules.FormatPixAmount(in.Cents)
	return &charge{Kind: kind, Created: now, Cents: in.Cents, LocID: locID, Host: host, Body: b}
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
	in, vs := checkCobRaw(body, v, s, kind, "", m.ownKeys(ai))
	if len(vs) > 0 {
		return nil, fail(vs)
	}
	now := m.clk.Now()
	var out Cob
	e := m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		old, err := r.charge(ai.ID, txid)
		if err != nil {
			return storeErr(err)
		}
		if old != nil {
			if efi {
				return efiErr(http.StatusConflict, "txid_duplicado", "Campo txid "+quote(txid)+" já foi utilizado por outra cobrança")
			}
			p := problem(http.StatusConflict, tCobVInvalida, "Cobrança já existe.", "txid "+txid+" já foi utilizado por outra cobrança.", []Violacao{{Razao: "txid já utilizado", Propriedade: "txid", Valor: txid}})
			p.p.Nome, p.p.Mensagem = "txid_duplicado", "Campo txid "+quote(txid)+" já foi utilizado por outra cobrança"
			return p
		}
		lid, err := r.claim(ai.ID, txid)
		if err != nil {
			return storeErr(err)
		}
		if lid != "" {
			l, err := r.lote(ai.ID, lid)
			if err != nil {
				return storeErr(err)
			}
			if l != nil && l.itemStatus(txid) == ItemProcessando {
				if efi {
					return efiErr(http.StatusConflict, "txid_duplicado", "Campo txid "+quote(txid)+" está em processamento no lote "+lid)
				}
				return problem(http.StatusConflict, tCobVInvalida, "Cobrança em processamento.", "txid "+txid+" está em processamento no lote "+lid+".", []Violacao{{Razao: "txid em processamento em um lote", Propriedade: "txid", Valor: txid}})
			}
		}
		locID, err := allocLocs(tx, 1)
		if err != nil {
			return storeErr(err)
		}
		c, err := newCharge(ai, kind, txid, in, now, locID, host, m.locOrderedFrom)
		if err != nil {
			return storeErr(err)
		}
		if err := m.saveCharge(tx, ai.ID, c); err != nil {
			return storeErr(err)
		}
		if lid != "" {
			if err := tx.DeleteAlias(idxClaim, ai.ID, txid); err != nil {
				return storeErr(err)
			}
		}
		if out, err = m.view(r, ai.ID, c); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if e != nil {
		return nil, e
	}
	return &out, nil
}

// view is the answer for a charge (with its received Pix).
func (m *Module) view(r reader, account string, c *charge) (Cob, error) {
	b := c.Body
	for _, e2e := range c.Paid {
		p, err := r.pix(account, e2e)
		if err != nil {
			return Cob{}, err
		}
		if p != nil {
			b.Pix = append(b.Pix, p.Body)
		}
	}
	return b, nil
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
	var out Cob
	e := m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		c, err := r.charge(ai.ID, txid)
		if err != nil {
			return storeErr(err)
		}
		if c == nil || c.Kind != kind {
			return m.chargeNotFound(kind, txid)
		}
		nc, e := m.applyPatch(ai, c, v.(map[string]any), "", m.clk.Now())
		if e != nil {
			return e
		}
		if err := m.saveCharge(tx, ai.ID, nc); err != nil {
			return storeErr(err)
		}
		if out, err = m.view(r, ai.ID, nc); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if e != nil {
		return nil, e
	}
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
func (m *Module) getCharge(ctx context.Context, accountID, kind, txid string) (*Cob, *apiError) {
	r := m.rd(ctx)
	c, err := r.charge(accountID, txid)
	if err != nil {
		return nil, internal(err)
	}
	if c == nil || c.Kind != kind {
		return nil, m.chargeNotFound(kind, txid)
	}
	out, err := m.view(r, accountID, c)
	if err != nil {
		return nil, internal(err)
	}
	return &out, nil
}
