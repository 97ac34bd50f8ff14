package pix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"remessa/sandbox/store"
)

// itemProblem is the problema of a denied item.
func itemProblem(vs []Violacao) *Problem {
	return &Problem{Type: ProblemBase + tCobVInvalida, Title: titleCobV, Status: http.StatusBadRequest,
		Detail: "A requisição que busca criar uma cobrança com vencimento não respeita o schema ou está semanticamente errada.", Violacoes: vs}
}

// processLote finishes every EM_PROCESSAMENTO item of a batch in one store
// transaction: each becomes CRIADA (its cobv now exists or was revised)
// or NEGADA with a problema.
func (m *Module) processLote(ctx context.Context, accountID, id string) error {
	ai, ok := m.account(accountID)
	if !ok {
		ai = accountInfo{ID: accountID}
	}
	pre := m.prepareLote(ctx, ai, id)
	return m.st.Tx(ctx, func(tx *store.Tx) error {
		r := m.rdTx(tx)
		old, err := r.lote(accountID, id)
		if err != nil {
			return err
		}
		if old == nil || !old.pending() {
			return nil // done meanwhile (another instance, a second task)
		}
		now := m.clk.Now()
		cp := *old
		l := &cp
		l.Items = make([]*loteItem, len(old.Items))
		var changed []*charge
		type newItem struct {
			i  int
			in *cobInput
		}
		var creates []newItem
		var pending []string
		for _, it := range old.Items {
			if it.Status == ItemProcessando {
				pending = append(pending, it.Txid)
			}
		}
		// Two queries for the batch: the claims, then the charges of the
		// txids without one (a claimed txid has no charge).
		claims, err := tx.GetAliases(idxClaim, accountID, pending)
		if err != nil {
			return err
		}
		var free []string
		for _, t := range pending {
			if _, ok := claims[t]; !ok {
				free = append(free, t)
			}
		}
		charges, err := m.charges.TxGetMany(tx, accountID, free)
		if err != nil {
			return err
		}
		for i, it := range old.Items {
			n := *it
			l.Items[i] = &n
			if it.Status != ItemProcessando {
				continue
			}
			prefix := fmt.Sprintf("cobsv[%d]", i)
			deny := func(vs []Violacao) {
				n.Status, n.Problema, n.Criacao, n.Op, n.Patch = ItemNegada, itemProblem(vs), now, "", nil
			}
			existing := charges[it.Txid]
			claim := ""
			if cl, ok := claims[it.Txid]; ok {
				claim = cl.Owner
			} else if existing != nil {
				claim = existing.LoteID
			}
			if existing != nil && existing.LoteID == "" {
				deny([]Violacao{{Razao: "txid já é uma cobrança fora deste lote", Propriedade: prefix + ".txid", Valor: it.Txid}})
				continue
			}
			if claim != id {
				deny([]Violacao{{Razao: "txid pertence a outro lote (" + claim + ")", Propriedade: prefix + ".txid", Valor: it.Txid}})
				continue
			}
			// The request decoded and checked before the transaction, when
			// the item is still the one that was prepared.
			var p *preparedItem
			if i < len(pre) && pre[i] != nil && pre[i].same(it) && (it.Op != "patch" || existing == nil) {
				p = pre[i]
			}
			var reqMap map[string]any
			if p == nil && (it.Op != "patch" || existing == nil) {
				if err := decodeInto(it.Req, &reqMap); err != nil {
					deny([]Violacao{{Razao: "JSON inválido", Propriedade: prefix}})
					continue
				}
			}
			var dev *Pessoa
			switch {
			case it.Op == "patch" && existing != nil:
				var pm map[string]any
				if err := decodeInto(it.Patch, &pm); err != nil {
					deny([]Violacao{{Razao: "JSON inválido", Propriedade: prefix}})
					continue
				}
				nc, e := m.applyPatch(ai, existing, pm, prefix, now)
				if e != nil {
					deny(e.p.Violacoes)
					continue
				}
				changed = append(changed, nc)
				dev = nc.Body.Devedor
			case existing != nil: // a re-PUT revises the charge
				in, vs := p.check(reqMap, prefix, ai)
				if len(vs) > 0 {
					deny(vs)
					continue
				}
				if existing.Body.Status != StatusAtiva {
					deny([]Violacao{{Razao: "cobrança com status " + existing.Body.Status + " não pode ser alterada", Propriedade: prefix + ".status", Valor: existing.Body.Status}})
					continue
				}
				nc := revise(existing, in, now)
				changed = append(changed, nc)
				dev = nc.Body.Devedor
			default: // creation (a PATCH of a denied item merges into its request)
				if it.Op == "patch" {
					if p != nil {
						n.Req = p.merged
					} else {
						n.Req = mergeItemPatch(&reqMap, it.Patch)
					}
				}
				in, vs := p.check(reqMap, prefix, ai)
				if len(vs) > 0 {
					deny(vs)
					continue
				}
				creates = append(creates, newItem{i, in})
				dev = in.Body.Devedor
			}
			if n.Status == ItemProcessando {
				// CRIADA: the charge holds the request from now on.
				n.Status, n.Criacao, n.Op, n.Patch, n.Req = ItemCriada, now, "", nil, nil
				if dev != nil {
					n.Dev = dev.CPF + dev.CNPJ
				}
			}
		}
		if len(creates) > 0 {
			first, err := allocLocs(tx, len(creates))
			if err != nil {
				return err
			}
			created := make([]string, 0, len(creates))
			for _, c := range creates {
				created = append(created, l.Items[c.i].Txid)
			}
			// The charges say which batch holds their txids from now on.
			if err := tx.DeleteAliases(idxClaim, accountID, created); err != nil {
				return err
			}
			for k, c := range creates {
				it := l.Items[c.i]
				ch, err := newCharge(ai, kindCobV, it.Txid, c.in, now, first+int64(k), l.Host, m.locOrderedFrom)
				if err != nil {
					return err
				}
				ch.LoteID = id
				changed = append(changed, ch)
			}
		}
		if err := m.saveCharges(tx, accountID, changed); err != nil {
			return err
		}
		return m.saveLote(tx, accountID, l)
	})
}

// preparedItem is a batch item's creation request decoded and checked
// outside the write transaction (processLote): the work per item that
// does not depend on the store, done while other writers hold the lock.
type preparedItem struct {
	op, txid   string
	req, patch []byte // the item as prepared (it is used only if still so)
	merged     []byte // op patch: the request with the revision merged in
	in         *cobInput
	vs         []Violacao
}

// same tells whether item it is still the one p was prepared from.
func (p *preparedItem) same(it *loteItem) bool {
	return p.op == it.Op && p.txid == it.Txid && bytes.Equal(p.req, it.Req) && bytes.Equal(p.patch, it.Patch)
}

// check is checkCob of the item's request: the prepared result when p is
// set, else reqMap checked now.
func (p *preparedItem) check(reqMap map[string]any, prefix string, ai accountInfo) (*cobInput, []Violacao) {
	if p != nil {
		return p.in, p.vs
	}
	return checkCob(reqMap, cobvItemS, kindCobV, prefix, ai.ownsKey)
}

// mergeItemPatch merges the revision patch (less its status) into
// *reqMap and returns the merged request's JSON.
func mergeItemPatch(reqMap *map[string]any, patch []byte) []byte {
	var pm map[string]any
	if err := decodeInto(patch, &pm); err == nil {
		delete(pm, "status")
		*reqMap = mergePatch(*reqMap, pm)
	}
	b, _ := json.Marshal(*reqMap)
	return b
}

// prepareLote decodes and checks the requests of the batch's items
// EM_PROCESSAMENTO as the batch is committed now, before processLote's
// write transaction; nil entries (and a nil slice, when the batch cannot
// be read) are done inside it. An item whose request is not JSON is left
// to the transaction too.
func (m *Module) prepareLote(ctx context.Context, ai accountInfo, id string) []*preparedItem {
	l, err := m.rd(ctx).lote(ai.ID, id)
	if err != nil || l == nil || !l.pending() {
		return nil
	}
	out := make([]*preparedItem, len(l.Items))
	decoded := m.takeHandOff(ai.ID, id)
	for i, it := range l.Items {
		if it.Status != ItemProcessando {
			continue
		}
		var reqMap map[string]any
		if d, ok := decoded[it.Txid]; ok && bytes.Equal(d.raw, it.Req) {
			reqMap = d.m // as decodeInto(it.Req) would make it
		} else if err := decodeInto(it.Req, &reqMap); err != nil {
			continue
		}
		p := &preparedItem{op: it.Op, txid: it.Txid, req: it.Req, patch: it.Patch}
		raw := []byte(it.Req) // the struct decoded from the request as stored
		if it.Op == "patch" {
			p.merged = mergeItemPatch(&reqMap, it.Patch)
			raw = nil
		}
		p.in, p.vs = checkCobRaw(raw, reqMap, cobvItemS, kindCobV, fmt.Sprintf("cobsv[%d]", i), ai.ownsKey)
		out[i] = p
	}
	return out
}
