package pix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"remessa/sandbox/store"
)

// A new batch on a sandbox without a batch delay (Config.BatchDelay 0,
// the default) is processed by its PUT: every item is decoded and checked
// in the handler's goroutine before the write transaction (concurrent PUTs
// check on both cores), and the transaction checks the batch rules,
// creates the charges and writes the batch once, in its final state. No
// claim rows are written for the created items and deleted again, and the
// worker does not read the batch back. The answer is still 202 with no
// body; a client polling GET /v2/lotecobv/{id} sees the final state at
// once. A re-PUT, a PATCH, a batch delay and work resumed after a restart
// go through the worker (processLote).

// freshLote is a new batch processed by its PUT (putLote): its final
// document, encoded, and the charges to create.
type freshLote struct {
	l       *lote
	raw     []byte      // l encoded (as encoding/json does, as the batches' cache does: marshalLote)
	creates []freshItem // the items to create, in the batch's order
	// The store rows of the charges of creates, built and encoded
	// (buildCharges).
	rows chargeRows
}

// freshItem is an item of a freshLote that becomes a charge.
type freshItem struct {
	i  int // its index in the batch
	in *cobInput
}

// prepareFresh decodes and checks each item of lb as processLote would
// (the same prefix, the same checkCobRaw of the same bytes and map) and
// builds the batch in the state processLote would leave it in when no
// other batch and no charge holds its txids: CRIADA or NEGADA with its
// problema, each at now.
func prepareFresh(ai accountInfo, id, host string, lb *loteBody, now time.Time) (*freshLote, error) {
	if len(lb.items) != len(lb.txids) || (lb.raws != nil && len(lb.raws) != len(lb.txids)) {
		return nil, fmt.Errorf("pix: batch %s: %d items, %d requests, %d txids", id, len(lb.items), len(lb.raws), len(lb.txids))
	}
	l := &lote{ID: id, Created: now, Host: host, Items: make([]*loteItem, len(lb.txids))}
	if lb.descricao != nil {
		l.Descricao = *lb.descricao
	}
	f := &freshLote{l: l, creates: make([]freshItem, 0, len(lb.txids))}
	own := lastKeyMemo(ai.ownsKey) // a batch's items usually have one chave
	for i, t := range lb.txids {
		it := &loteItem{Txid: t, Criacao: now}
		l.Items[i] = it
		// The request's bytes are not needed to check it (checkCobRaw reads
		// the map, or encodes it again: the same struct), only to keep a
		// denied item's request (fillRaws then, from the body).
		var raw []byte
		if lb.raws != nil {
			raw = lb.raws[i]
		}
		var in *cobInput
		var vs []Violacao
		if c := lb.typedItem(i); c != nil {
			// Read and checked against the schema by the typed path; a
			// violation is named by the reference path.
			if in, vs = checkCobFields(*c, kindCobV, "", own); len(vs) > 0 {
				in = nil
			}
		}
		if in == nil {
			in, vs = checkCobRaw(raw, lb.item(i), cobvItemS, kindCobV, "cobsv["+strconv.Itoa(i)+"]", own)
		}
		if len(vs) > 0 {
			// As processLote's deny: the request stays with the item.
			lb.fillRaws()
			it.Status, it.Problema, it.Req = ItemNegada, itemProblem(vs), lb.raws[i]
			continue
		}
		it.Status = ItemCriada
		if d := in.Body.Devedor; d != nil {
			it.Dev = d.CPF + d.CNPJ
		}
		f.creates = append(f.creates, freshItem{i: i, in: in})
	}
	raw, err := marshalLote(l) // json.Marshal(l), by hand (lotejson.go)
	if err != nil {
		return nil, err
	}
	f.raw = raw
	return f, nil
}

// buildCharges makes the charges of f's CRIADA items as processLote
// would (newCharge, the batch's id; derived by a batchDeriver), with loc ids of the module's block
// (reserveLocs), and encodes them and their index rows as saveCharges
// does, before the write transaction.
func (m *Module) buildCharges(ctx context.Context, ai accountInfo, f *freshLote) error {
	if len(f.creates) == 0 {
		return nil
	}
	first, err := m.reserveLocs(ctx, len(f.creates))
	if err != nil {
		return err
	}
	l := f.l
	cs := make([]*charge, len(f.creates))
	d := newBatchDeriver(ai, m.locOrderedFrom, l.Created) // newCharge's derive, once per batch what can be (derive_batch.go)
	for k, c := range f.creates {
		txid := l.Items[c.i].Txid
		ch := chargeOf(kindCobV, txid, c.in, l.Created, first+int64(k), l.Host)
		if err := d.derive(ch, txid); err != nil {
			return err
		}
		ch.LoteID = l.ID
		cs[k] = ch
	}
	f.rows, err = m.chargeRows(ai.ID, cs)
	return err
}

// lookUp is the txids of free (those no batch claims) whose charges the
// transaction of a batch processed by its PUT (f) looks up: those of its
// NEGADA items. A charge that exists on a txid it creates is found by
// commitFresh's InsertNew (takenRefusal), one index seek less per item
// in the write lock. Without f (a batch for the worker), all of free.
func (f *freshLote) lookUp(free []string, claims map[string]store.Alias) []string {
	if f == nil {
		return free
	}
	return f.denied(claims)
}

// denied is the txids of f's NEGADA items that claims do not hold.
func (f *freshLote) denied(claims map[string]store.Alias) []string {
	var out []string
	for _, it := range f.l.Items {
		if _, ok := claims[it.Txid]; !ok && it.Status == ItemNegada {
			out = append(out, it.Txid)
		}
	}
	return out
}

// batchViolations checks a new batch's txids (txids) against the charges
// of look that exist and the claim rows (claims): a txid with a charge,
// or claimed by a batch that has it in processing, is a violation.
func (m *Module) batchViolations(tx *store.Tx, r reader, account string, txids, look []string, claims map[string]store.Alias) ([]Violacao, error) {
	existing, err := m.charges.TxGetMany(tx, account, look)
	if err != nil {
		return nil, err
	}
	var vs []Violacao
	held := map[string]*lote{}
	for i, t := range txids {
		p := "cobsv[" + strconv.Itoa(i) + "].txid"
		if c := existing[t]; c != nil {
			if c.LoteID == "" {
				vs = append(vs, Violacao{Razao: "cobrança criada por PUT /v2/cobv/{txid} não pode entrar em um lote", Propriedade: p, Valor: t})
			} else {
				vs = append(vs, Violacao{Razao: "cobrança já pertence ao lote " + c.LoteID, Propriedade: p, Valor: t})
			}
			continue
		}
		cl, ok := claims[t]
		if !ok {
			continue
		}
		lid := cl.Owner
		l, seen := held[lid]
		if !seen {
			if l, err = r.lote(account, lid); err != nil {
				return nil, err
			}
			held[lid] = l
		}
		if l != nil && l.itemStatus(t) != ItemNegada {
			vs = append(vs, Violacao{Razao: "txid em processamento no lote " + lid, Propriedade: p, Valor: t})
		}
	}
	return vs, nil
}

// takenRefusal answers commitFresh's failure err: a store error, or a
// charge found on a txid the batch creates (store.TakenError: nothing
// was written), which refuses the batch as its look-up would have.
func (m *Module) takenRefusal(tx *store.Tx, r reader, account string, txids, free []string, claims map[string]store.Alias, err error) *apiError {
	var taken *store.TakenError
	if !errors.As(err, &taken) {
		return storeErr(err)
	}
	vs, err2 := m.batchViolations(tx, r, account, txids, free, claims)
	if err2 != nil {
		return storeErr(err2)
	}
	if len(vs) == 0 { // (a txid taken, yet no charge on it)
		return storeErr(err)
	}
	if len(vs) > maxViolacoes {
		vs = vs[:maxViolacoes]
	}
	return problem(http.StatusBadRequest, tLoteInvalido, titleLote, "O lote viola as regras de lote.", vs)
}

// commitFresh writes f in tx once its batch rules held: the charges of
// its CRIADA items as built (buildCharges) with their index rows and
// locations (a claim row another batch left on such a txid is deleted: a
// claim exists only while its txid has no charge), a claim row of this
// batch on each NEGADA item's txid (as a batch PUT leaves it, so a
// re-PUT may create it), and the batch. claims are the claim rows of the
// batch's txids, as read in tx.
func (m *Module) commitFresh(tx *store.Tx, ai accountInfo, f *freshLote, claims map[string]store.Alias) error {
	l := f.l
	var del []string
	var keep []store.AliasRow
	for _, it := range l.Items {
		_, claimed := claims[it.Txid]
		switch {
		case it.Status == ItemNegada && (!claimed || claims[it.Txid].Owner != l.ID):
			keep = append(keep, store.AliasRow{Key: it.Txid, Owner: l.ID})
		case it.Status == ItemCriada && claimed:
			del = append(del, it.Txid)
		}
	}
	if len(f.rows.docs) != len(f.creates) {
		return fmt.Errorf("pix: batch %s: %d charges built for %d items", l.ID, len(f.rows.docs), len(f.creates))
	}
	// The charges first: InsertNew undoes them if a txid has one already.
	if err := m.charges.InsertNew(tx, ai.ID, f.rows.docs); err != nil {
		return err
	}
	if err := tx.DeleteAliases(idxClaim, ai.ID, del); err != nil {
		return err
	}
	if err := tx.PutAliases(idxLoc, "", f.rows.locs); err != nil {
		return err
	}
	if err := tx.PutAliases(idxClaim, ai.ID, keep); err != nil {
		return err
	}
	return m.saveLoteRaw(tx, ai.ID, l, f.raw)
}

// lastKeyMemo is own remembering its answer for the last key asked (own
// is a function of the key alone).
func lastKeyMemo(own keyChecker) keyChecker {
	var last string
	var answer, asked bool
	return func(key string) bool {
		if !asked || key != last {
			last, answer, asked = key, own(key), true
		}
		return answer
	}
}
