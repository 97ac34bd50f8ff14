package pix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"time"

	"remessa/rules"
	"remessa/sandbox/httpx"
	"remessa/sandbox/store"
)

// lote is the stored form of a batch of cobv.
type lote struct {
	ID        string      `json:"id"`
	Descricao string      `json:"descricao,omitempty"`
	Created   time.Time   `json:"created"`
	Host      string      `json:"host"` // for the location of the charges it creates
	Items     []*loteItem `json:"items"`
}

// loteItem is one creation request of a batch.
type loteItem struct {
	Txid     string          `json:"txid"`
	Status   string          `json:"status"`
	Criacao  time.Time       `json:"criacao,omitempty"`
	Problema *Problem        `json:"problema,omitempty"`
	Req      json.RawMessage `json:"req,omitempty"`   // full creation request last accepted (until CRIADA: the charge has it)
	Dev      string          `json:"dev,omitempty"`   // the devedor's CPF or CNPJ once CRIADA (listing filter)
	Patch    json.RawMessage `json:"patch,omitempty"` // pending revision (PATCH)
	Op       string          `json:"op,omitempty"`    // put | patch while EM_PROCESSAMENTO
}

func (l *lote) pending() bool {
	for _, it := range l.Items {
		if it.Status == ItemProcessando {
			return true
		}
	}
	return false
}

// hasDevedor tells whether an item of the batch is for that CPF or CNPJ.
func (l *lote) hasDevedor(cpf, cnpj string) bool {
	for _, it := range l.Items {
		if it.Dev != "" {
			if (cpf != "" && it.Dev == cpf) || (cnpj != "" && it.Dev == cnpj) {
				return true
			}
			continue
		}
		// As a map, as the worker reads it (a key sent twice: the last).
		var r map[string]any
		if decodeInto(it.Req, &r) != nil {
			continue
		}
		d, _ := r["devedor"].(map[string]any)
		dcpf, _ := d["cpf"].(string)
		dcnpj, _ := d["cnpj"].(string)
		if (cpf != "" && dcpf == cpf) || (cnpj != "" && dcnpj == cnpj) {
			return true
		}
	}
	return false
}

func (l *lote) itemStatus(txid string) string {
	for _, it := range l.Items {
		if it.Txid == txid {
			return it.Status
		}
	}
	return ""
}

// LoteItem is a batch item as answered.
type LoteItem struct {
	Criacao  string   `json:"criacao,omitempty"`
	Txid     string   `json:"txid"`
	Status   string   `json:"status"`
	Problema *Problem `json:"problema,omitempty"`
}

// LoteCobV is a batch as answered by GET /v2/lotecobv/{id}.
type LoteCobV struct {
	ID        int64      `json:"id"`
	Descricao string     `json:"descricao,omitempty"`
	Criacao   string     `json:"criacao"`
	Cobsv     []LoteItem `json:"cobsv"`
}

func (l *lote) view() LoteCobV {
	id, _ := strconv.ParseInt(l.ID, 10, 64)
	v := LoteCobV{ID: id, Descricao: l.Descricao, Criacao: ts(l.Created), Cobsv: make([]LoteItem, len(l.Items))}
	for i, it := range l.Items {
		v.Cobsv[i] = LoteItem{Txid: it.Txid, Status: it.Status, Problema: it.Problema}
		if !it.Criacao.IsZero() {
			v.Cobsv[i].Criacao = ts(it.Criacao)
		}
	}
	return v
}

var reLoteID = regexp.MustCompile(`^[0-9]{1,18}$`)

// loteBody is the split head of a batch request: the items stay raw so an
// item that breaks the schema is denied alone.
type loteBody struct {
	descricao *string
	items     []map[string]any  // nil for an item the typed path read until item decodes it
	typed     []*Cob            // each item's request read by the typed path (lote_fast.go), or nil
	itemRaws  [][]byte          // with typed: each item's bytes in body
	raws      []json.RawMessage // each item's request as sent, compacted (fillRaws)
	txids     []string
	body      []byte // the request
}

// parseLoteBody checks the head of a PUT/PATCH body: descricao, 1..1000
// objects in cobsv, each with a valid and unique txid; raws are filled.
func parseLoteBody(body []byte, typ, title string) (*loteBody, *apiError) {
	lb, e := parseLoteHead(body, typ, title)
	if e != nil {
		return nil, e
	}
	lb.fillRaws()
	return lb, nil
}

// parseLoteHead is parseLoteBody without raws (a new batch processed by
// its PUT needs them only for a denied item: fillRaws then).
func parseLoteHead(body []byte, typ, title string) (*loteBody, *apiError) {
	fail := func(vs ...Violacao) *apiError {
		return problem(http.StatusBadRequest, typ, title, "A requisição do lote não respeita o schema ou está semanticamente errada.", vs)
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, fail(Violacao{Razao: "JSON inválido: " + err.Error()})
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fail(Violacao{Razao: "o corpo deve ser um objeto JSON, recebido " + typeName(v)})
	}
	lb := &loteBody{body: body}
	var vs []Violacao
	for k, x := range m {
		switch k {
		case "descricao":
			s, ok := x.(string)
			if x == nil { // null: not sent
				continue
			}
			if !ok {
				vs = append(vs, Violacao{Razao: "deve ser uma string", Propriedade: "descricao"})
			} else if len([]rune(s)) > 140 {
				vs = append(vs, Violacao{Razao: "deve ter no máximo 140 caracteres", Propriedade: "descricao"})
			} else if c, pos, ctl := httpx.ControlChar(s, false); ctl {
				vs = append(vs, Violacao{Razao: httpx.ControlCharMessage(c, pos), Propriedade: "descricao"})
			} else {
				lb.descricao = &s
			}
		case "cobsv":
		default:
			vs = append(vs, Violacao{Razao: "propriedade desconhecida", Propriedade: k})
		}
	}
	arr, ok := m["cobsv"].([]any)
	switch {
	case m["cobsv"] == nil:
		vs = append(vs, Violacao{Razao: "campo obrigatório ausente", Propriedade: "cobsv"})
	case !ok:
		vs = append(vs, Violacao{Razao: "deve ser um array", Propriedade: "cobsv"})
	case len(arr) < 1 || len(arr) > rules.MaxBatchItems:
		vs = append(vs, Violacao{Razao: fmt.Sprintf("um lote tem de 1 a %d cobranças; recebidas %d", rules.MaxBatchItems, len(arr)), Propriedade: "cobsv", Valor: strconv.Itoa(len(arr))})
	}
	if len(vs) > 0 {
		sort.Slice(vs, func(i, j int) bool { return vs[i].Propriedade < vs[j].Propriedade })
		return nil, fail(vs...)
	}
	seen := map[string]int{}
	for i, x := range arr {
		p := fmt.Sprintf("cobsv[%d]", i)
		item, ok := x.(map[string]any)
		if !ok {
			vs = append(vs, Violacao{Razao: "deve ser um objeto", Propriedade: p})
			continue
		}
		t, _ := item["txid"].(string)
		switch {
		case item["txid"] == nil:
			vs = append(vs, Violacao{Razao: "campo obrigatório ausente", Propriedade: p + ".txid"})
		case !rules.ValidTxid(t):
			vs = append(vs, Violacao{Razao: "txid deve ter de 26 a 35 caracteres alfanuméricos [a-zA-Z0-9]", Propriedade: p + ".txid", Valor: short(item["txid"])})
		default:
			if j, dup := seen[t]; dup {
				vs = append(vs, Violacao{Razao: fmt.Sprintf("txid repetido no lote (também em cobsv[%d])", j), Propriedade: p + ".txid", Valor: t})
			}
			seen[t] = i
		}
		if len(vs) >= maxViolacoes {
			break
		}
		lb.items = append(lb.items, item)
		lb.txids = append(lb.txids, t)
	}
	if len(vs) > 0 {
		return nil, fail(vs...)
	}
	return lb, nil
}

// parseLotePut is parseLoteHead of a PUT's body, by the typed path when
// it can (lote_fast.go).
func parseLotePut(body []byte) (*loteBody, *apiError) {
	if lb, ok := parseLoteTyped(body); ok {
		return lb, nil
	}
	return parseLoteHead(body, tLoteInvalido, titleLote)
}

// fillRaws sets lb.raws (once): each item's request as sent (compacted),
// not encoded again from its map: the body is valid JSON with exactly the
// keys parseLoteHead checked, so its cobsv decodes to the same items in
// the same order. (Readers of a stored request decode it to a map, so a
// key sent twice reads as the map did: the last one.)
func (lb *loteBody) fillRaws() {
	if lb.raws != nil {
		return
	}
	var buf bytes.Buffer
	if json.Compact(&buf, lb.body) == nil {
		if raws, ok := splitCobsv(buf.Bytes()); ok && len(raws) == len(lb.txids) {
			lb.raws = raws
			return
		}
	}
	// Cannot happen; encode the items as before (with their txid, which
	// a check of the item deletes from its map).
	encode := func(i int) json.RawMessage {
		item := lb.item(i)
		if _, ok := item["txid"]; !ok {
			item["txid"] = lb.txids[i]
		}
		raw, _ := json.Marshal(item)
		return raw
	}
	var split struct {
		Cobsv []json.RawMessage `json:"cobsv"`
	}
	lb.raws = make([]json.RawMessage, len(lb.txids))
	if err := json.Unmarshal(lb.body, &split); err != nil || len(split.Cobsv) != len(lb.txids) {
		for i := range lb.txids {
			lb.raws[i] = encode(i)
		}
		return
	}
	for i, raw := range split.Cobsv {
		buf.Reset()
		if json.Compact(&buf, raw) != nil {
			lb.raws[i] = encode(i)
			continue
		}
		lb.raws[i] = bytes.Clone(buf.Bytes())
	}
}

// splitCobsv returns the elements of the array under the key "cobsv" of
// the object body (valid and compact JSON: json.Compact's output), the
// last one when the key repeats (as decoding does), each a slice of body
// (capacity cut, so an append copies). ok is false when it cannot tell:
// a key with an escape (it may spell cobsv), no such key, not an array.
// It saves decoding the body a second time to find them.
func splitCobsv(body []byte) (raws []json.RawMessage, ok bool) {
	i := 0
	if len(body) < 2 || body[0] != '{' {
		return nil, false
	}
	i++
	found := false
	for i < len(body) && body[i] != '}' {
		if body[i] == ',' {
			i++
		}
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(body) && body[end] != '"' {
			if body[end] == '\\' {
				return nil, false
			}
			end++
		}
		if end+1 >= len(body) || body[end+1] != ':' {
			return nil, false
		}
		key := string(body[i+1 : end])
		i = end + 2
		if key != "cobsv" {
			if i = skipJSON(body, i); i < 0 {
				return nil, false
			}
			continue
		}
		if i >= len(body) || body[i] != '[' {
			return nil, false
		}
		found, raws = true, raws[:0]
		i++
		for i < len(body) && body[i] != ']' {
			if body[i] == ',' {
				i++
			}
			start := i
			if i = skipJSON(body, i); i < 0 {
				return nil, false
			}
			raws = append(raws, json.RawMessage(body[start:i:i]))
		}
		i++ // ']'
	}
	return raws, found
}

// skipJSON returns the index just past the value starting at body[i]
// (compact JSON), or -1.
func skipJSON(body []byte, i int) int {
	if i >= len(body) {
		return -1
	}
	depth := 0
	for ; i < len(body); i++ {
		switch c := body[i]; c {
		case '"':
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
			if i >= len(body) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of a literal
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	if depth == 0 {
		return i // a literal at the end
	}
	return -1
}

// putLote handles PUT /v2/lotecobv/{id}: 202 with no body once the batch
// is persisted, processed (a new batch without a batch delay: lote_now.go)
// or with every item EM_PROCESSAMENTO for the worker.
func (m *Module) putLote(ctx context.Context, ai accountInfo, id, host string, body []byte) *apiError {
	if !reLoteID.MatchString(id) {
		return problem(http.StatusBadRequest, tLoteInvalido, titleLote, "O id do lote deve ser um inteiro positivo.", []Violacao{{Razao: "id deve ser um inteiro (int64)", Propriedade: "id", Valor: id}})
	}
	id = canonicalID(id)
	lb, e := parseLotePut(body)
	if e != nil {
		return e
	}
	now := m.clk.Now()
	// The document of a new batch, built and encoded before the write
	// transaction (a re-PUT is built inside it from the stored batch):
	// without a batch delay in its final state (lote_now.go), else with
	// every item EM_PROCESSAMENTO for the worker.
	var now1 *freshLote
	var fresh *lote
	var freshRaw []byte
	if m.delay == 0 {
		// A batch already committed is a re-PUT (never deleted): not built
		// for nothing (its loc ids would be lost).
		old, err := m.rd(ctx).lote(ai.ID, id)
		if err == nil && old == nil {
			if now1, err = prepareFresh(ai, id, host, lb, now); err == nil {
				err = m.buildCharges(ctx, ai, now1)
			}
		}
		if err != nil {
			return internal(err)
		}
	}
	if now1 == nil {
		lb.fillRaws()
		fresh = &lote{ID: id, Created: now, Host: host, Items: make([]*loteItem, len(lb.txids))}
		if lb.descricao != nil {
			fresh.Descricao = *lb.descricao
		}
		for i, t := range lb.txids {
			fresh.Items[i] = &loteItem{Txid: t, Status: ItemProcessando, Req: lb.raws[i], Op: "put"}
		}
		var err error
		if freshRaw, err = json.Marshal(fresh); err != nil {
			return internal(err)
		}
	}
	done := false // processed by this PUT (now1 committed)
	e = m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		done = false
		old, err := r.lote(ai.ID, id)
		if err != nil {
			return storeErr(err)
		}
		var vs []Violacao
		var claims map[string]store.Alias
		var free []string // the txids no batch claims (a claimed txid has no charge)
		if old != nil {
			// Batch rule: a change carries exactly the original txids.
			orig := map[string]bool{}
			for _, it := range old.Items {
				orig[it.Txid] = true
			}
			for i, t := range lb.txids {
				if !orig[t] {
					vs = append(vs, Violacao{Razao: "txid não pertence ao lote; um lote não ganha nem perde cobranças", Propriedade: fmt.Sprintf("cobsv[%d].txid", i), Valor: t})
				}
			}
			if len(lb.txids) != len(old.Items) && len(vs) == 0 {
				vs = append(vs, Violacao{Razao: fmt.Sprintf("o lote tem %d cobranças e a requisição %d; a alteração deve conter exatamente as cobranças da requisição original", len(old.Items), len(lb.txids)), Propriedade: "cobsv"})
			}
		} else {
			// Two queries for the batch: the claims, then the charges of
			// the free txids (but those a batch processed by its PUT
			// creates: see lookUp).
			claims, err = tx.GetAliases(idxClaim, ai.ID, lb.txids)
			if err != nil {
				return storeErr(err)
			}
			for _, t := range lb.txids {
				if _, ok := claims[t]; !ok {
					free = append(free, t)
				}
			}
			if vs, err = m.batchViolations(tx, r, ai.ID, lb.txids, now1.lookUp(free, claims), claims); err != nil {
				return storeErr(err)
			}
			if len(vs) > 0 && now1 != nil { // a refusal names every charge that exists
				if vs, err = m.batchViolations(tx, r, ai.ID, lb.txids, free, claims); err != nil {
					return storeErr(err)
				}
			}
		}
		if len(vs) > 0 {
			if len(vs) > maxViolacoes {
				vs = vs[:maxViolacoes]
			}
			return problem(http.StatusBadRequest, tLoteInvalido, titleLote, "O lote viola as regras de lote.", vs)
		}
		// The batch rules held: only a store error fails it now, so its
		// thousands of rows need no savepoint of their own.
		tx.Final()
		if old == nil && now1 != nil {
			if err := m.commitFresh(tx, ai, now1, claims); err != nil {
				return m.takenRefusal(tx, r, ai.ID, lb.txids, free, claims, err)
			}
			done = true
			return nil
		}
		var l *lote
		if old != nil {
			lb.fillRaws() // (a batch committed since putLote looked)
			cp := *old
			l = &cp
			l.Items = make([]*loteItem, len(old.Items))
			byTxid := map[string]int{}
			for i, t := range lb.txids {
				byTxid[t] = i
			}
			for i, it := range old.Items {
				n := *it
				j := byTxid[it.Txid]
				n.Req, n.Patch, n.Op, n.Status, n.Problema, n.Criacao, n.Dev = lb.raws[j], nil, "put", ItemProcessando, nil, time.Time{}, ""
				l.Items[i] = &n
			}
			if lb.descricao != nil {
				l.Descricao = *lb.descricao
			}
		} else {
			l = fresh
		}
		var err2 error
		if l == fresh {
			err2 = m.saveLoteRaw(tx, ai.ID, l, freshRaw)
		} else {
			err2 = m.saveLote(tx, ai.ID, l)
		}
		if err2 != nil {
			return storeErr(err2)
		}
		if old == nil {
			// A re-PUT does not take back a txid that went on to another batch:
			// that item is denied when processed.
			claims := make([]store.AliasRow, len(l.Items))
			for i, it := range l.Items {
				claims[i] = store.AliasRow{Key: it.Txid, Owner: id}
			}
			if err := tx.PutAliases(idxClaim, ai.ID, claims); err != nil {
				return storeErr(err)
			}
		}
		return nil
	})
	if e != nil || done {
		return e
	}
	if now1 == nil { // (prepareFresh consumed the decoded items)
		m.handOff(ai.ID, id, lb)
	}
	m.enqueue(task{kind: taskLote, account: ai.ID, id: id})
	return nil
}

// decodedItem is a batch item's request as PUT decoded it: its bytes as
// stored and the map they decode to.
type decodedItem struct {
	raw []byte
	m   map[string]any
}

// maxHandOffs bounds the batches whose decoded requests wait for the
// worker (handOff).
const maxHandOffs = 8

// handOff keeps the items PUT decoded for the worker's prepareLote, which
// would decode each again from the stored batch (takeHandOff).
func (m *Module) handOff(account, id string, lb *loteBody) {
	if len(lb.items) != len(lb.raws) {
		return
	}
	h := make(map[string]decodedItem, len(lb.items))
	for i, t := range lb.txids {
		h[t] = decodedItem{raw: lb.raws[i], m: lb.item(i)}
	}
	m.hmu.Lock()
	defer m.hmu.Unlock()
	if m.handOffs == nil || len(m.handOffs) >= maxHandOffs {
		m.handOffs = map[[2]string]map[string]decodedItem{}
	}
	m.handOffs[[2]string{account, id}] = h
}

// takeHandOff returns (and forgets) the items PUT decoded for batch id;
// nil if none are kept. An item is used only if its request is still
// the bytes it was decoded from.
func (m *Module) takeHandOff(account, id string) map[string]decodedItem {
	m.hmu.Lock()
	defer m.hmu.Unlock()
	h := m.handOffs[[2]string{account, id}]
	delete(m.handOffs, [2]string{account, id})
	return h
}

func canonicalID(id string) string {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return id
	}
	return strconv.FormatInt(n, 10)
}

// patchLote handles PATCH /v2/lotecobv/{id}: revisions of some of the
// batch's items (no new txids); 202.
func (m *Module) patchLote(ctx context.Context, ai accountInfo, id string, body []byte) *apiError {
	if !reLoteID.MatchString(id) {
		return notFound("Lote " + id + " não encontrado.")
	}
	id = canonicalID(id)
	lb, e := parseLoteBody(body, tCobVInvalida, titleCobV)
	if e != nil {
		return e
	}
	e = m.write(ctx, func(tx *store.Tx, r reader) *apiError {
		old, err := r.lote(ai.ID, id)
		if err != nil {
			return storeErr(err)
		}
		if old == nil {
			return notFound("Lote " + id + " não encontrado.")
		}
		idx := map[string]int{}
		for i, it := range old.Items {
			idx[it.Txid] = i
		}
		var vs []Violacao
		for i, t := range lb.txids {
			if _, ok := idx[t]; !ok {
				vs = append(vs, Violacao{Razao: "txid não pertence ao lote; PATCH não pode adicionar cobranças", Propriedade: fmt.Sprintf("cobsv[%d].txid", i), Valor: t})
			}
		}
		// Each revision must respect the revision schema (the full check
		// happens when the worker merges it).
		for i, item := range lb.items {
			if len(vs) >= maxViolacoes {
				break
			}
			cobvItemPatchS.check(fmt.Sprintf("cobsv[%d]", i), item, &vs)
		}
		if len(vs) > 0 {
			if len(vs) > maxViolacoes {
				vs = vs[:maxViolacoes]
			}
			return problem(http.StatusBadRequest, tCobVInvalida, titleCobV, "A revisão do lote não respeita o schema ou as regras de lote.", vs)
		}
		cp := *old
		l := &cp
		l.Items = append([]*loteItem(nil), old.Items...)
		for j, t := range lb.txids {
			i := idx[t]
			n := *l.Items[i]
			if n.Status == ItemProcessando && n.Op == "put" {
				// A PUT still waiting absorbs the revision.
				var base map[string]any
				_ = decodeInto(n.Req, &base)
				merged := mergePatch(base, lb.items[j])
				n.Req, _ = json.Marshal(merged)
			} else if n.Status == ItemProcessando && n.Op == "patch" {
				var base map[string]any
				_ = decodeInto(n.Patch, &base)
				merged := mergePatch(base, lb.items[j])
				n.Patch, _ = json.Marshal(merged)
			} else {
				n.Patch, n.Op = lb.raws[j], "patch"
			}
			n.Status, n.Problema, n.Criacao, n.Dev = ItemProcessando, nil, time.Time{}, ""
			l.Items[i] = &n
		}
		if lb.descricao != nil {
			l.Descricao = *lb.descricao
		}
		if err := m.saveLote(tx, ai.ID, l); err != nil {
			return storeErr(err)
		}
		return nil
	})
	if e != nil {
		return e
	}
	m.enqueue(task{kind: taskLote, account: ai.ID, id: id})
	return nil
}

// getLote handles GET /v2/lotecobv/{id}: the answer's JSON.
func (m *Module) getLote(ctx context.Context, accountID, id string) ([]byte, *apiError) {
	if !reLoteID.MatchString(id) {
		return nil, notFound("Lote " + id + " não encontrado.")
	}
	id = canonicalID(id)
	l, err := m.rd(ctx).lote(accountID, id)
	if err != nil {
		return nil, internal(err)
	}
	if l == nil {
		return nil, notFound("Lote " + id + " não encontrado.")
	}
	return m.loteView(l)
}

// maxLoteViews bounds the encoded answers kept (loteView).
const maxLoteViews = 16

// loteView is the encoded view of l. A client polls a batch until it is
// done, and the cache hands out the same value until the batch changes (a
// change is a new value), so the answer of a cached value is encoded once
// and kept with it, instead of 1,000 items encoded again on every poll.
// Cached values are never modified, so the bytes stay the value's.
func (m *Module) loteView(l *lote) ([]byte, *apiError) {
	if m.st.Shared() { // no cache: every value is new
		b, err := json.Marshal(l.view())
		if err != nil {
			return nil, internal(err)
		}
		return b, nil
	}
	m.vmu.Lock()
	b, ok := m.views[l]
	m.vmu.Unlock()
	if ok {
		return b, nil
	}
	b, err := json.Marshal(l.view())
	if err != nil {
		return nil, internal(err)
	}
	m.vmu.Lock()
	if m.views == nil || len(m.views) >= maxLoteViews {
		m.views = map[*lote][]byte{}
	}
	m.views[l] = b
	m.vmu.Unlock()
	return b, nil
}

// LoteList is the answer of GET /v2/lotecobv.
type LoteList struct {
	Parametros Parametros `json:"parametros"`
	Lotes      []LoteCobV `json:"lotes"`
}

// listLotes handles GET /v2/lotecobv (inicio, fim, pagination; status
// keeps batches with an item in that status, cpf/cnpj batches with an item
// for that devedor). The batches in the window are read one at a time.
func (m *Module) listLotes(ctx context.Context, accountID string, q url.Values) (*LoteList, *apiError) {
	lq, e := parseList(q, false)
	if e != nil {
		return nil, e
	}
	status := q.Get("status")
	switch status {
	case "", ItemCriada, ItemNegada, ItemProcessando:
	default:
		return nil, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Parâmetro status inválido.", []Violacao{{Razao: "use CRIADA, NEGADA ou EM_PROCESSAMENTO", Propriedade: "status", Valor: status}})
	}
	cpf, cnpj := q.Get("cpf"), q.Get("cnpj")
	if cpf != "" && cnpj != "" {
		return nil, problem(http.StatusBadRequest, tRequisicao, titleRequisicao, "Parâmetros cpf e cnpj juntos.", []Violacao{{Razao: "informe cpf ou cnpj, não ambos", Propriedade: "cpf", Valor: cpf}})
	}
	lq.params.Status, lq.params.CPF, lq.params.CNPJ = status, cpf, cnpj
	out := &LoteList{Lotes: []LoteCobV{}}
	r := m.rd(ctx)
	ids, err := r.ids(store.Query{Kind: storeLote, Account: accountID, Where: []store.Cond{
		store.Between(store.ColN, lq.inicio.UnixNano(), lq.fim.UnixNano())}})
	if err != nil {
		return nil, internal(err)
	}
	// Only the ids of the matching batches are kept; the page's views are
	// made on a second pass.
	var sel []string
	for _, id := range ids {
		if status == "" && cpf == "" && cnpj == "" {
			sel = append(sel, id)
			continue
		}
		l, err := r.lote(accountID, id)
		if err != nil {
			return nil, internal(err)
		}
		if l == nil {
			continue
		}
		if status != "" {
			has := false
			for _, it := range l.Items {
				has = has || it.Status == status
			}
			if !has {
				continue
			}
		}
		if (cpf != "" || cnpj != "") && !l.hasDevedor(cpf, cnpj) {
			continue
		}
		sel = append(sel, id)
	}
	lo, hi := lq.window(len(sel))
	for _, id := range sel[lo:hi] {
		l, err := r.lote(accountID, id)
		if err != nil {
			return nil, internal(err)
		}
		if l != nil {
			out.Lotes = append(out.Lotes, l.view())
		}
	}
	out.Parametros = lq.params
	return out, nil
}
