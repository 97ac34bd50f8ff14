package pix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"remessa/rules"
	"remessa/sandbox/auth"
	"remessa/sandbox/store"
)

// Index rows of the module (store.Index), besides the documents' kinds:
//
//	storeCharge  id txid      N created (ns)  S1 cob|cobv  S2 status  S3 devedor cpf  S4 devedor cnpj  I1 batch id
//	storeLote    id batch id  N created (ns)  S1 "1" while an item is EM_PROCESSAMENTO
//	storePix     id e2eId     N horário (ns)  S1 txid  S2 "1" while a refund is EM_PROCESSAMENTO  I1 1 with refunds
//	storeEnvio   id idEnvio   N time (ns)     S1 status  S2 "1" while the worker owes it a step
//	storeHook    id chave     N created (ns)
//
// and aliases (store.Alias):
//
//	idxLoc       account "", key the location's last element  Owner txid  Ref account (the BR Code's payload URL)
//	idxClaim     key txid      Owner the batch that last took it (only while no charge has the txid)
//	idxE2E       key endToEndId of a send  Owner idEnvio
const (
	idxLoc   = "pix.loc"
	idxClaim = "pix.claim"
	idxE2E   = "pix.e2e"
	// seqIndexed marks a database whose documents all have their index
	// rows (written by this version; older ones are indexed at start).
	seqIndexed = "pix.indexed"
	// seqLocOrdered is the first loc id whose location has the ordered
	// form (locationFor), set once: the next loc id when a version that
	// knows the form first opened the database.
	seqLocOrdered = "pix.loc.ordered"
)

// initLocOrdered reads (setting it the first time) the first loc id with
// an ordered location.
func (m *Module) initLocOrdered(ctx context.Context) error {
	v, err := m.st.Seq(ctx, seqLocOrdered)
	if err != nil || v > 0 {
		m.locOrderedFrom = v
		return err
	}
	err = m.st.Tx(ctx, func(tx *store.Tx) error {
		cur, err := tx.NextSeq(seqLocOrdered) // 1 unless another instance set it
		if err != nil || cur > 1 {
			v = cur - 1 // NextSeq added one to it: set it back
			if err == nil {
				return errLocOrderedSet
			}
			return err
		}
		// The next loc id. Read committed: writers are serialised, so no
		// other transaction changes it meanwhile.
		cur, err = m.st.Seq(ctx, "pix.loc")
		if err != nil {
			return err
		}
		v = cur + 1
		return tx.SetSeq(seqLocOrdered, v)
	})
	if errors.Is(err, errLocOrderedSet) {
		err = nil
	}
	m.locOrderedFrom = v
	return err
}

// errLocOrderedSet rolls initLocOrdered's transaction back: another
// instance set the sequence first.
var errLocOrderedSet = errors.New("pix: ordered locations already set")

func (m *Module) initCaches() {
	m.charges = store.NewCache(m.st, storeCharge, store.CacheOpts[charge]{Encode: m.encodeCharge, Decode: m.decodeCharge})
	m.lotes = store.NewCache(m.st, storeLote, store.CacheOpts[lote]{Size: 8})
	m.splits = store.NewCache(m.st, storeSplit, store.CacheOpts[splitDoc]{Size: 256})
	m.pixs = store.NewCache(m.st, storePix, store.CacheOpts[received]{Size: 1024})
	m.envios = store.NewCache(m.st, storeEnvio, store.CacheOpts[envio]{Size: 256})
	m.hooks = store.NewCache(m.st, storeHook, store.CacheOpts[webhook]{Size: 256})
}

// The stored form of a charge leaves out what is derived: the loc, the
// location, the BR Code, the recebedor (from the account), the txid (the
// document's id) and calendario.criacao (Created). LocID and Host rebuild
// them. A document written before (with body.loc) is read as it is.
func (m *Module) encodeCharge(_, _ string, c *charge) ([]byte, error) {
	if c.LocID == 0 {
		return marshalCharge(c)
	}
	n := *c
	n.Body.Loc, n.Body.Location, n.Body.PixCopiaECola, n.Body.Txid, n.Body.Calendario.Criacao = nil, "", "", "", ""
	n.Body.Pix = nil
	if n.Kind == kindCobV {
		n.Body.Recebedor = nil
	}
	return marshalCharge(&n)
}

func (m *Module) decodeCharge(account, txid string, raw []byte) (*charge, error) {
	c := new(charge)
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	if c.LocID == 0 || c.Body.Loc != nil {
		return c, nil
	}
	ai, ok := m.account(account)
	if !ok {
		ai = accountInfo{ID: account}
	}
	if err := c.derive(ai, txid, m.locOrderedFrom); err != nil {
		return nil, err
	}
	return c, nil
}

// derive fills the charge's derived fields from its LocID and Host; loc
// ids from orderedFrom on (> 0) have the ordered form of location.
func (c *charge) derive(ai accountInfo, txid string, orderedFrom int64) error {
	b := &c.Body
	b.Txid = txid
	created := ts(c.Created)
	b.Calendario.Criacao = created
	loc := locationFor(c.Host, ai.ID, c.Kind, c.LocID, orderedFrom > 0 && c.LocID >= orderedFrom)
	b.Loc = &Loc{ID: c.LocID, Location: loc, TipoCob: c.Kind, Criacao: created}
	b.Location = loc
	if c.Kind == kindCobV {
		b.Recebedor = &Pessoa{CNPJ: rules.CleanDocument(ai.CNPJ), Nome: ai.Name, Logradouro: recebedorLogradouro,
			Cidade: recebedorCidade, UF: recebedorUF, CEP: recebedorCEP}
	}
	code, err := rules.BRCode{Dynamic: true, URL: loc, MerchantName: merchantName(ai.Name), MerchantCity: merchantCity}.Encode()
	if err != nil {
		return fmt.Errorf("pix: BR Code of %s: %w", txid, err)
	}
	b.PixCopiaECola = code
	return nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// chargeIndex is the index row of charge c.
func chargeIndex(c *charge) store.Index {
	ix := store.Index{N: c.Created.UnixNano(), S1: c.Kind, S2: c.Body.Status}
	if d := c.Body.Devedor; d != nil {
		ix.S3, ix.S4 = d.CPF, d.CNPJ
	}
	if c.LoteID != "" {
		ix.I1, _ = strconv.ParseInt(c.LoteID, 10, 64)
	}
	return ix
}

// saveCharge writes charge c of account with its index row and alias.
func (m *Module) saveCharge(tx *store.Tx, account string, c *charge) error {
	return m.saveCharges(tx, account, []*charge{c})
}

// saveCharges is saveCharge for many charges of one account (a batch),
// in a few statements: each charge's document and index row are one row
// of the store, written by one statement.
func (m *Module) saveCharges(tx *store.Tx, account string, cs []*charge) error {
	rows, err := m.chargeRows(account, cs)
	if err != nil {
		return err
	}
	return m.putChargeRows(tx, account, rows)
}

// chargeRows are the store rows of charges of one account: each one's
// encoded document with its index row, and the location aliases. They
// need no transaction, so a batch builds them before taking the write
// lock (buildCharges) and writes them in it (putChargeRows).
type chargeRows struct {
	docs []store.DocRow[charge]
	locs []store.AliasRow
}

// chargeRows encodes cs (of account) into their store rows.
func (m *Module) chargeRows(account string, cs []*charge) (chargeRows, error) {
	r := chargeRows{docs: make([]store.DocRow[charge], len(cs)), locs: make([]store.AliasRow, 0, len(cs))}
	ixs := make([]store.Index, len(cs))
	for i, c := range cs {
		txid := c.Body.Txid
		raw, err := m.charges.Encode(account, txid, c)
		if err != nil {
			return chargeRows{}, err
		}
		ixs[i] = chargeIndex(c)
		r.docs[i] = store.DocRow[charge]{ID: txid, Raw: raw, V: c, Index: &ixs[i]}
		if c.Body.Location != "" {
			r.locs = append(r.locs, store.AliasRow{Key: locKey(c.Body.Location), Owner: txid, Ref: account})
		}
	}
	return r, nil
}

// putChargeRows writes rows (chargeRows of account) in tx.
func (m *Module) putChargeRows(tx *store.Tx, account string, rows chargeRows) error {
	if err := m.charges.PutMany(tx, account, rows.docs); err != nil {
		return err
	}
	return tx.PutAliases(idxLoc, "", rows.locs)
}

// saveLote writes batch l of account with its index row.
func (m *Module) saveLote(tx *store.Tx, account string, l *lote) error {
	if err := m.lotes.Put(tx, account, l.ID, l); err != nil {
		return err
	}
	return tx.PutIndex(storeLote, account, l.ID, store.Index{N: l.Created.UnixNano(), S1: flag(l.pending())})
}

// saveLoteRaw is saveLote with l already encoded (raw, as the cache's
// default encoding: encoding/json).
func (m *Module) saveLoteRaw(tx *store.Tx, account string, l *lote, raw []byte) error {
	if err := m.lotes.PutRaw(tx, account, l.ID, raw, l); err != nil {
		return err
	}
	return tx.PutIndex(storeLote, account, l.ID, store.Index{N: l.Created.UnixNano(), S1: flag(l.pending())})
}

func (m *Module) savePix(tx *store.Tx, account string, p *received) error {
	e2e := p.Body.EndToEndID
	if err := m.pixs.Put(tx, account, e2e, p); err != nil {
		return err
	}
	ix := store.Index{N: p.Time.UnixNano(), S1: p.Body.Txid}
	for _, d := range p.Body.Devolucoes {
		ix.I1 = 1
		if d.Status == RefundProcessando {
			ix.S2 = "1"
		}
	}
	return tx.PutIndex(storePix, account, e2e, ix)
}

func (m *Module) saveEnvio(tx *store.Tx, account string, e *envio) error {
	if err := m.envios.Put(tx, account, e.IDEnvio, e); err != nil {
		return err
	}
	pending := e.Status == SendProcessando || e.pendingRefunds()
	if err := tx.PutIndex(storeEnvio, account, e.IDEnvio, store.Index{N: e.Time.UnixNano(), S1: e.Status, S2: flag(pending)}); err != nil {
		return err
	}
	return tx.PutAlias(idxE2E, account, e.E2E, e.IDEnvio, "")
}

func (m *Module) saveHook(tx *store.Tx, account string, h *webhook) error {
	if err := m.hooks.Put(tx, account, h.Chave, h); err != nil {
		return err
	}
	return tx.PutIndex(storeHook, account, h.Chave, store.Index{N: h.Created.UnixNano()})
}

// reader reads the module's documents: inside a write transaction (tx set)
// as the transaction sees them, otherwise the committed state.
type reader struct {
	m   *Module
	ctx context.Context
	tx  *store.Tx
}

func (m *Module) rd(ctx context.Context) reader { return reader{m: m, ctx: ctx} }
func (m *Module) rdTx(tx *store.Tx) reader      { return reader{m: m, ctx: tx.Context(), tx: tx} }
func get[T any](r reader, c *store.Cache[T], account, id string) (*T, error) {
	if r.tx != nil {
		return c.TxGet(r.tx, account, id)
	}
	return c.Get(r.ctx, account, id)
}

func (r reader) charge(account, txid string) (*charge, error) {
	return get(r, r.m.charges, account, txid)
}
func (r reader) lote(account, id string) (*lote, error)      { return get(r, r.m.lotes, account, id) }
func (r reader) split(account, id string) (*splitDoc, error) { return get(r, r.m.splits, account, id) }
func (r reader) pix(account, e2e string) (*received, error)  { return get(r, r.m.pixs, account, e2e) }
func (r reader) envio(account, id string) (*envio, error)    { return get(r, r.m.envios, account, id) }

func (r reader) alias(kind, account, key string) (store.Alias, bool, error) {
	if r.tx != nil {
		return r.tx.GetAlias(kind, account, key)
	}
	return r.m.st.GetAlias(r.ctx, kind, account, key)
}

func (r reader) find(q store.Query, fn func(id string, ix store.Index) error) error {
	if r.tx != nil {
		return r.tx.Find(q, fn)
	}
	return r.m.st.Find(r.ctx, q, fn)
}

// ids lists the ids of the index rows q selects (read whole before the
// documents are, so no query runs inside another: the readers' pool is
// small).
func (r reader) ids(q store.Query) ([]string, error) {
	var out []string
	err := r.find(q, func(id string, _ store.Index) error {
		out = append(out, id)
		return nil
	})
	return out, err
}

// claim is the batch that last took txid ("" = none): the charge's batch
// once it exists, before that the claim row its batch wrote. A claim row
// exists only while its txid has no charge (creating the charge deletes
// it).
func (r reader) claim(account, txid string) (string, error) {
	a, ok, err := r.alias(idxClaim, account, txid)
	if err != nil || ok {
		return a.Owner, err
	}
	c, err := r.charge(account, txid)
	if err != nil || c == nil {
		return "", err
	}
	return c.LoteID, nil
}

// locKey is the alias key of a location: its last path element (32 hex
// digits derived from the account and the loc id, unique without the host
// the client reached the sandbox by).
func locKey(loc string) string {
	if i := strings.LastIndexByte(loc, '/'); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

// chargeByLoc finds the charge whose payload location is loc.
func (r reader) chargeByLoc(loc string) (account, txid string, err error) {
	a, ok, err := r.alias(idxLoc, "", locKey(loc))
	if err != nil || !ok {
		return "", "", err
	}
	c, err := r.charge(a.Ref, a.Owner)
	if err != nil || c == nil || c.Body.Location != loc {
		return "", "", err // another host's location with the same suffix: not this BR Code
	}
	return a.Ref, a.Owner, nil
}

// envioByE2E finds the idEnvio of a send by its endToEndId.
func (r reader) envioByE2E(account, e2e string) (string, error) {
	a, ok, err := r.alias(idxE2E, account, e2e)
	if err != nil || !ok {
		return "", err
	}
	return a.Owner, nil
}

// hookFor returns the webhook of key (compared after normalisation).
func (r reader) hookFor(account, key string) (*webhook, error) {
	h, err := get(r, r.m.hooks, account, key)
	if err != nil || h != nil {
		return h, err
	}
	nk := normalizeKey(key)
	ids, err := r.ids(store.Query{Kind: storeHook, Account: account})
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if normalizeKey(id) == nk {
			return get(r, r.m.hooks, account, id)
		}
	}
	return nil, nil
}

// errRefused rolls a write transaction back for a refusal (an *apiError
// kept by the caller).
var errRefused = errors.New("pix: refused")

// write runs fn in a store transaction; an *apiError from fn rolls it back
// and is returned, a store error becomes a 500.
func (m *Module) write(ctx context.Context, fn func(tx *store.Tx, r reader) *apiError) *apiError {
	var refusal *apiError
	err := m.st.Tx(ctx, func(tx *store.Tx) error {
		if e := fn(tx, m.rdTx(tx)); e != nil {
			if e.internal != nil {
				return e.internal
			}
			refusal = e
			return errRefused
		}
		return nil
	})
	if refusal != nil {
		return refusal
	}
	if err != nil {
		m.log.Error().Err(err).Msg("pix: write")
		return internal(err)
	}
	return nil
}

// storeErr turns a store error met inside write into a 500 that rolls the
// transaction back.
func storeErr(err error) *apiError {
	e := internal(err)
	e.internal = err
	return e
}

// accounts lists the ids of every account (the worker's scans).
func (m *Module) accountIDs() []string {
	if m.auth == nil {
		return nil
	}
	var ids []string
	for _, a := range m.auth.Accounts() {
		ids = append(ids, a.ID)
	}
	return ids
}

// migrate writes the index rows of documents stored by an older version
// (which kept every document in memory and had none), once.
func (m *Module) migrate(ctx context.Context) error {
	if v, err := m.st.Seq(ctx, seqIndexed); err != nil || v > 0 {
		return err
	}
	return m.st.Tx(ctx, func(tx *store.Tx) error {
		if v, err := tx.NextSeq(seqIndexed); err != nil || v > 1 {
			return err // another instance did it
		}
		type row struct {
			account, id string
			raw         []byte
		}
		each := func(kind string, fn func(r row) error) error {
			var rows []row
			err := m.st.Each(ctx, kind, func(account, id string, raw []byte) error {
				rows = append(rows, row{account, id, append([]byte(nil), raw...)})
				return nil
			})
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := fn(r); err != nil {
					return fmt.Errorf("pix: index %s/%s/%s: %w", kind, r.account, r.id, err)
				}
			}
			return nil
		}
		claims := map[[2]string]*lote{}
		err := each(storeLote, func(r row) error {
			var l lote
			if err := json.Unmarshal(r.raw, &l); err != nil {
				return err
			}
			for _, it := range l.Items {
				if p := claims[[2]string{r.account, it.Txid}]; p == nil || p.Created.Before(l.Created) || (p.Created.Equal(l.Created) && p.ID < l.ID) {
					claims[[2]string{r.account, it.Txid}] = &l
				}
			}
			return tx.PutIndex(storeLote, r.account, r.id, store.Index{N: l.Created.UnixNano(), S1: flag(l.pending())})
		})
		if err != nil {
			return err
		}
		err = each(storeCharge, func(r row) error {
			c, err := m.decodeCharge(r.account, r.id, r.raw)
			if err != nil {
				return err
			}
			c.Body.Txid = r.id
			if err := m.saveCharge(tx, r.account, c); err != nil {
				return err
			}
			delete(claims, [2]string{r.account, r.id})
			return nil
		})
		if err != nil {
			return err
		}
		for k, l := range claims {
			if err := tx.PutAlias(idxClaim, k[0], k[1], l.ID, ""); err != nil {
				return err
			}
		}
		if err := each(storePix, func(r row) error {
			var p received
			if err := json.Unmarshal(r.raw, &p); err != nil {
				return err
			}
			return m.savePix(tx, r.account, &p)
		}); err != nil {
			return err
		}
		if err := each(storeEnvio, func(r row) error {
			var e envio
			if err := json.Unmarshal(r.raw, &e); err != nil {
				return err
			}
			return m.saveEnvio(tx, r.account, &e)
		}); err != nil {
			return err
		}
		return each(storeHook, func(r row) error {
			var h webhook
			if err := json.Unmarshal(r.raw, &h); err != nil {
				return err
			}
			h.Chave = r.id
			return m.saveHook(tx, r.account, &h)
		})
	})
}

func normalizeKey(k string) string { return auth.NormalizeKey(k) }
