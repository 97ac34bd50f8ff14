package charges

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"remessa/rules"
	"remessa/sandbox/store"
)

// The module's index rows and aliases (sandbox/store), besides its
// documents (a standalone charge, a carnet with its parcels):
//
//	idxList   one row per charge (standalone or parcel), id = charge id, N = charge id,
//	          Owner "n<carnet id>" for a parcel; S1 billet|card|carnet  S2 status
//	          S3 custom_id  S4 customer document; I1 day created  I2 day paid
//	          I3 due day (slip) or link expiry  I4 total (days as yyyymmdd)
//	aliasNotif  account "", key notification token  Owner "c<id>"|"n<id>"  Ref account
//	aliasDoc    account "", key document token      Owner "c<id>"|"n<id>"  Ref account
const (
	idxList    = "charges.list"
	aliasNotif = "charges.notif"
	aliasDoc   = "charges.doc"
	seqIndexed = "charges.indexed"
)

func idKey(id int64) string { return strconv.FormatInt(id, 10) }

func (m *Module) initState() {
	st := m.d.Store
	m.charges = store.NewCache(st, KindCharge, store.CacheOpts[Charge]{Encode: encodeCharge, Decode: decodeCharge})
	m.carnets = store.NewCache(st, KindCarnet, store.CacheOpts[Carnet]{Size: 2048, Encode: encodeCarnet, Decode: decodeCarnet})
	m.tokens = store.NewCache(st, KindCardToken, store.CacheOpts[cardToken]{Size: 1024})
	m.keys = store.NewCache(st, KindCardKey, store.CacheOpts[cardKey]{Size: 256,
		Decode: func(_, _ string, raw []byte) (*cardKey, error) { return decodeCardKey(raw) }})
	m.owners.init(1 << 16)
}

// A slip's QR image (a PNG data URI of its BR Code, a few KB) is not
// stored: it is made again from the BR Code when the document is read.
// Documents stored with it are read as they are.

// withoutQR is c with its slip's QR image left out (c is not changed).
func withoutQR(c *Charge) *Charge {
	if c == nil || c.Payment == nil || c.Payment.Billet == nil || c.Payment.Billet.QRImage == "" || c.Payment.Billet.BRCode == "" {
		return c
	}
	n, p, b := *c, *c.Payment, *c.Payment.Billet
	b.QRImage = ""
	p.Billet = &b
	n.Payment = &p
	return &n
}

func encodeCharge(_, _ string, c *Charge) ([]byte, error) { return marshalChargeDoc(withoutQR(c)) }

func encodeCarnet(_, _ string, cn *Carnet) ([]byte, error) {
	n := *cn
	n.Parcels = make([]*Charge, len(cn.Parcels))
	for i, p := range cn.Parcels {
		n.Parcels[i] = withoutQR(p)
	}
	return marshalCarnet(&n)
}

// withQR puts back the QR image of c's slip (qrMemo's).
func withQR(c *Charge) error {
	if c == nil || c.Payment == nil || c.Payment.Billet == nil || c.Payment.Billet.QRImage != "" || c.Payment.Billet.BRCode == "" {
		return nil
	}
	img, err := qrMemo.image(c.Payment.Billet.BRCode)
	if err != nil {
		return fmt.Errorf("charges: QR image of %d: %w", c.ID, err)
	}
	c.Payment.Billet.QRImage = img
	return nil
}

func decodeCharge(_, _ string, raw []byte) (*Charge, error) {
	c := new(Charge)
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	return c, withQR(c)
}

func decodeCarnet(_, _ string, raw []byte) (*Carnet, error) {
	cn := new(Carnet)
	if err := json.Unmarshal(raw, cn); err != nil {
		return nil, err
	}
	for _, p := range cn.Parcels {
		if err := withQR(p); err != nil {
			return nil, err
		}
	}
	return cn, nil
}

// ownerCache maps (account, charge id) to the carnet holding the charge
// (0: standalone). A charge never changes owner, so the map is right on
// any backend; it is bounded like the caches (two generations).
type ownerCache struct {
	mu       sync.Mutex
	max      int
	cur, old map[ownerKey]int64
}

type ownerKey struct {
	account string
	id      int64
}

func (o *ownerCache) init(max int) {
	o.max, o.cur, o.old = max, map[ownerKey]int64{}, map[ownerKey]int64{}
}

func (o *ownerCache) get(account string, id int64) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := ownerKey{account, id}
	if v, ok := o.cur[k]; ok {
		return v, true
	}
	if v, ok := o.old[k]; ok {
		o.putLocked(k, v)
		return v, true
	}
	return 0, false
}

func (o *ownerCache) put(account string, id, carnet int64) {
	o.mu.Lock()
	o.putLocked(ownerKey{account, id}, carnet)
	o.mu.Unlock()
}

func (o *ownerCache) putLocked(k ownerKey, v int64) {
	if len(o.cur) >= o.max/2 {
		o.old, o.cur = o.cur, make(map[ownerKey]int64, o.max/2)
	}
	o.cur[k] = v
}

// readCharge finds charge id of account, standalone or parcel (then with
// its carnet), inside tx when given, else the committed state.
func (m *Module) readCharge(ctx context.Context, tx *store.Tx, account string, id int64) (*Charge, *Carnet, error) {
	getCharge := func() (*Charge, error) {
		if tx != nil {
			return m.charges.TxGet(tx, account, idKey(id))
		}
		return m.charges.Get(ctx, account, idKey(id))
	}
	getCarnet := func(cid int64) (*Charge, *Carnet, error) {
		var cn *Carnet
		var err error
		if tx != nil {
			cn, err = m.carnets.TxGet(tx, account, idKey(cid))
		} else {
			cn, err = m.carnets.Get(ctx, account, idKey(cid))
		}
		if err != nil || cn == nil {
			return nil, nil, err
		}
		for _, p := range cn.Parcels {
			if p.ID == id {
				return p, cn, nil
			}
		}
		return nil, nil, nil
	}
	if cid, ok := m.owners.get(account, id); ok {
		if cid != 0 {
			return getCarnet(cid)
		}
		c, err := getCharge()
		return c, nil, err
	}
	c, err := getCharge()
	if err != nil || c != nil {
		if c != nil {
			m.owners.put(account, id, 0)
		}
		return c, nil, err
	}
	var ix store.Index
	var ok bool
	if tx != nil {
		ix, ok, err = tx.GetIndex(idxList, account, idKey(id))
	} else {
		ix, ok, err = m.d.Store.GetIndex(ctx, idxList, account, idKey(id))
	}
	if err != nil || !ok || !strings.HasPrefix(ix.Owner, "n") {
		return nil, nil, err
	}
	cid, err := strconv.ParseInt(ix.Owner[1:], 10, 64)
	if err != nil {
		return nil, nil, fmt.Errorf("charges: index row of %d: owner %q", id, ix.Owner)
	}
	m.owners.put(account, id, cid)
	return getCarnet(cid)
}

// day is t's São Paulo date as yyyymmdd (0 for the zero time).
func day(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	d := rules.Today(t)
	return int64(d.Year()*10000 + int(d.Month())*100 + d.Day())
}

// dayOf is an ISO date as yyyymmdd (0 when it does not parse).
func dayOf(s string) int64 {
	d, err := rules.ParseISODate(s)
	if err != nil {
		return 0
	}
	return int64(d.Year()*10000 + int(d.Month())*100 + d.Day())
}

// indexRow is the index row of charge c (cn: its carnet).
func indexRow(c *Charge, cn *Carnet) store.Index {
	ix := store.Index{N: c.ID, S2: c.Status, I1: day(c.CreatedAt), I2: day(c.PaidAt), I4: c.Total}
	switch {
	case cn != nil:
		ix.S1, ix.Owner = "carnet", "n"+idKey(cn.ID)
	case c.Payment != nil && c.Payment.Card != nil:
		ix.S1 = "card"
	default:
		ix.S1 = "billet"
	}
	customID := c.CustomID
	if cn != nil {
		customID = cn.CustomID
	}
	if customID != nil {
		ix.S3 = *customID
	}
	if cust := chargeCustomer(c, cn); cust != nil {
		ix.S4 = rules.CleanDocument(cust.Document())
	}
	switch {
	case c.Payment != nil && c.Payment.Billet != nil:
		ix.I3 = dayOf(c.Payment.Billet.ExpireAt)
	case c.Link != nil:
		ix.I3 = dayOf(c.Link.ExpireAt)
	}
	return ix
}

// indexRows are the index rows of an owner (a carnet or a standalone
// charge), by charge id.
func indexRows(cn *Carnet, c *Charge) map[int64]store.Index {
	out := map[int64]store.Index{}
	if cn != nil {
		for _, p := range cn.Parcels {
			out[p.ID] = indexRow(p, cn)
		}
	}
	if c != nil {
		out[c.ID] = indexRow(c, nil)
	}
	return out
}

// writeIndex writes the owner's index rows that changed and, for a new
// owner, its aliases.
func (m *Module) writeIndex(tx *store.Tx, u *update) error {
	var account string
	switch {
	case u.carnet != nil:
		account = u.carnet.Account
	case u.charge != nil:
		account = u.charge.Account
	default:
		return nil
	}
	// indexRows' rows, in parcel order and without its map
	var rows []store.IndexRow
	add := func(id int64, ix store.Index) {
		if old, ok := u.before[id]; !ok || old != ix {
			rows = append(rows, store.IndexRow{ID: idKey(id), Index: ix})
		}
	}
	if cn := u.carnet; cn != nil {
		rows = make([]store.IndexRow, 0, len(cn.Parcels))
		for _, p := range cn.Parcels {
			add(p.ID, indexRow(p, cn))
		}
	}
	if c := u.charge; c != nil {
		add(c.ID, indexRow(c, nil))
	}
	if len(rows) > 0 {
		if err := tx.PutIndexes(idxList, account, rows); err != nil {
			return err
		}
	}
	if !u.created {
		return nil
	}
	var docs []store.AliasRow
	if cn := u.carnet; cn != nil {
		owner := "n" + idKey(cn.ID)
		if err := tx.PutAlias(aliasNotif, "", cn.NotifToken, owner, account); err != nil {
			return err
		}
		docs = append(docs, store.AliasRow{Key: cn.DocToken, Owner: owner, Ref: account})
		for _, p := range cn.Parcels {
			if p.DocToken != parcelDocToken(cn.DocToken, p.Parcel) {
				docs = append(docs, store.AliasRow{Key: p.DocToken, Owner: "c" + idKey(p.ID), Ref: account})
			}
			m.owners.put(account, p.ID, cn.ID)
		}
	}
	if c := u.charge; c != nil {
		owner := "c" + idKey(c.ID)
		if c.NotifToken != "" {
			if err := tx.PutAlias(aliasNotif, "", c.NotifToken, owner, account); err != nil {
				return err
			}
		}
		docs = append(docs, store.AliasRow{Key: c.DocToken, Owner: owner, Ref: account})
	}
	return tx.PutAliases(aliasDoc, "", docs)
}

// A carnet's document token is 30 random hex digits and "00"; its
// parcels' are the same 30 digits and the parcel's number in hex, so one
// alias (the carnet's) finds them all. Parcels stored before, and beyond
// the 255th, have random tokens and aliases of their own.
func carnetDocToken() string { return randomHex(15) + "00" }

func parcelDocToken(carnet string, parcel int) string {
	if len(carnet) != 32 || !strings.HasSuffix(carnet, "00") || parcel < 1 || parcel > 255 {
		return randomHex(16)
	}
	return carnet[:30] + fmt.Sprintf("%02x", parcel)
}

// docRef resolves a document token: the account and the charge or carnet.
func (m *Module) docRef(ctx context.Context, token string) (account string, chargeID, carnetID int64, ok bool, err error) {
	account, chargeID, carnetID, ok, err = m.tokenRef(ctx, aliasDoc, token)
	if err != nil || ok || len(token) != 32 || strings.HasSuffix(token, "00") {
		return account, chargeID, carnetID, ok, err
	}
	n, perr := strconv.ParseUint(token[30:], 16, 8)
	if perr != nil {
		return "", 0, 0, false, nil
	}
	account, _, cid, ok, err := m.tokenRef(ctx, aliasDoc, token[:30]+"00")
	if err != nil || !ok || cid == 0 {
		return "", 0, 0, false, err
	}
	cn, err := m.carnets.Get(ctx, account, idKey(cid))
	if err != nil || cn == nil || int(n) > len(cn.Parcels) {
		return "", 0, 0, false, err
	}
	p := cn.Parcels[n-1]
	if p.DocToken != token {
		return "", 0, 0, false, nil
	}
	return account, p.ID, 0, true, nil
}

// tokenRef resolves a notification or document token: the account and
// the charge ("c") or carnet ("n") it names.
func (m *Module) tokenRef(ctx context.Context, kind, token string) (account string, chargeID, carnetID int64, ok bool, err error) {
	a, found, err := m.d.Store.GetAlias(ctx, kind, "", token)
	if err != nil || !found || len(a.Owner) < 2 {
		return "", 0, 0, false, err
	}
	id, perr := strconv.ParseInt(a.Owner[1:], 10, 64)
	if perr != nil {
		return "", 0, 0, false, nil
	}
	if a.Owner[0] == 'n' {
		return a.Ref, 0, id, true, nil
	}
	return a.Ref, id, 0, true, nil
}

// refreshAccount applies the due time-based transitions of one account:
// the index names the slips past due still waiting and the links past
// their expiry; only those are read and changed.
func (m *Module) refreshAccount(ctx context.Context, account string) *Error {
	yesterday := dayOf(rules.Today(m.now()).AddDate(0, 0, -1).Format(dateLayout)) // a due day before today's
	type target struct {
		id     int64
		carnet int64
	}
	var todo []target
	for _, st := range []string{StatusWaiting, StatusLink} {
		err := m.d.Store.Find(ctx, store.Query{Kind: idxList, Account: account, Where: []store.Cond{
			store.Eq(store.ColS2, st), store.Between(store.ColI3, 1, yesterday)}}, func(id string, ix store.Index) error {
			n, _ := strconv.ParseInt(id, 10, 64)
			t := target{id: n}
			if strings.HasPrefix(ix.Owner, "n") {
				t.carnet, _ = strconv.ParseInt(ix.Owner[1:], 10, 64)
			}
			todo = append(todo, t)
			return nil
		})
		if err != nil {
			m.log.Error().Err(err).Msg("charges: find due transitions")
			return errInternal
		}
	}
	done := map[int64]bool{}
	for _, t := range todo {
		var e *Error
		if t.carnet != 0 {
			if done[t.carnet] {
				continue
			}
			done[t.carnet] = true
			_, e = m.getCarnet(ctx, account, t.carnet)
		} else {
			_, _, e = m.getCharge(ctx, account, t.id)
		}
		if e != nil && e.Code != CodeNotFound {
			return e
		}
	}
	return nil
}

// idAlloc hands out charge and carnet ids. On a store of its own they come
// from a counter in memory (seeded from the store's sequences, which each
// creation's transaction advances); on a shared store (several instances)
// each instance reserves blocks from the store's sequences, so ids stay
// unique across instances.
type idAlloc struct {
	st             *store.Store
	mu             sync.Mutex
	charge, carnet idBlock
}

type idBlock struct {
	name        string
	floor       int64 // ids start after it
	next, last  int64 // next..last are this instance's
	reserveSize int64
}

func (a *idAlloc) init(ctx context.Context, st *store.Store) error {
	a.st = st
	a.charge = idBlock{name: seqCharge, floor: firstChargeID - 1, reserveSize: 200}
	a.carnet = idBlock{name: seqCarnet, floor: firstCarnetID - 1, reserveSize: 20}
	if st.Shared() {
		a.charge.next, a.charge.last = 1, 0 // empty: reserved on first use
		a.carnet.next, a.carnet.last = 1, 0
		return nil
	}
	for _, b := range []*idBlock{&a.charge, &a.carnet} {
		v, err := st.Seq(ctx, b.name)
		if err != nil {
			return err
		}
		b.next, b.last = max(v, b.floor)+1, math.MaxInt64
	}
	return nil
}

// take reserves n consecutive ids of b and returns the first.
func (a *idAlloc) take(ctx context.Context, b *idBlock, n int) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b.last-b.next+1 < int64(n) {
		size := max(int64(n), b.reserveSize)
		var first int64
		err := a.st.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.SetSeq(b.name, b.floor); err != nil {
				return err
			}
			var err error
			first, err = tx.NextSeqN(b.name, int(size))
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("charges: reserve ids: %w", err)
		}
		b.next, b.last = first, first+size-1
	}
	first := b.next
	b.next += int64(n)
	return first, nil
}

// high is the highest id handed out of b (0 before any).
func (a *idAlloc) high(b *idBlock) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return b.next - 1
}

// migrate writes the index rows and aliases of documents stored by an
// older version (which kept everything in memory and had none), once.
func (m *Module) migrate(ctx context.Context) error {
	st := m.d.Store
	if v, err := st.Seq(ctx, seqIndexed); err != nil || v > 0 {
		return err
	}
	type row struct {
		account, id string
		raw         []byte
	}
	var charges, carnets []row
	for _, k := range []struct {
		kind string
		dst  *[]row
	}{{KindCharge, &charges}, {KindCarnet, &carnets}} {
		err := st.Each(ctx, k.kind, func(account, id string, raw []byte) error {
			*k.dst = append(*k.dst, row{account, id, append([]byte(nil), raw...)})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return st.Tx(ctx, func(tx *store.Tx) error {
		if v, err := tx.NextSeq(seqIndexed); err != nil || v > 1 {
			return err
		}
		for _, r := range charges {
			var c Charge
			if err := json.Unmarshal(r.raw, &c); err != nil {
				return fmt.Errorf("charges: decode stored charge %s/%s: %w", r.account, r.id, err)
			}
			if err := m.writeIndex(tx, &update{charge: &c, created: true}); err != nil {
				return err
			}
		}
		for _, r := range carnets {
			var cn Carnet
			if err := json.Unmarshal(r.raw, &cn); err != nil {
				return fmt.Errorf("charges: decode stored carnet %s/%s: %w", r.account, r.id, err)
			}
			if err := m.writeIndex(tx, &update{carnet: &cn, created: true}); err != nil {
				return err
			}
		}
		return nil
	})
}
