// Package charges is the sandbox's Charges API (/v1): charges, slips, card
// payments, payment links, carnets, marketplace split, notifications and
// the sandbox form of card tokenization.
//
// State lives in memory (maps per account under one mutex), is loaded from
// the store at start and is written through with store.Tx before a request
// is answered, so an acknowledged write survives kill -9. A carnet and its
// parcels are one stored document; a standalone charge is one document.
package charges

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"remessa/rules"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

func init() {
	module.Register("charges", func(d module.Deps) (module.Module, error) {
		m, err := New(d)
		if err != nil {
			return nil, err
		}
		return m, nil
	})
}

// Store kinds and sequences of this module.
const (
	KindCharge    = "charges.charge"
	KindCarnet    = "charges.carnet"
	KindCardToken = "charges.cardtoken"
	KindCardKey   = "charges.cardkey"
	seqCharge     = "charges.charge_id"
	seqCarnet     = "charges.carnet_id"
	firstChargeID = 1000000 // ids start at a realistic size
	firstCarnetID = 100000
)

type ref struct {
	account  string
	chargeID int64 // 0 for a carnet
	carnetID int64
}

type accountState struct {
	charges map[int64]*Charge // standalone charges and parcels (pointers into their carnet)
	carnets map[int64]*Carnet
}

// Module serves the charges API.
type Module struct {
	d   module.Deps
	log zerolog.Logger

	mu       sync.RWMutex
	accounts map[string]*accountState
	notif    map[string]ref // notification token -> object
	docs     map[string]ref // document token -> object
	tokens   map[string]*cardToken
	keys     map[string]*cardKey // account -> tokenization key

	nextCharge atomic.Int64
	nextCarnet atomic.Int64
	keyMu      sync.Mutex
}

// New builds the module and loads its state from d.Store.
func New(d module.Deps) (*Module, error) {
	if d.Store == nil || d.Clock == nil {
		return nil, errors.New("charges: Deps.Store and Deps.Clock are required")
	}
	m := &Module{d: d, log: d.Logger.With().Str("module", "charges").Logger(),
		accounts: map[string]*accountState{}, notif: map[string]ref{}, docs: map[string]ref{},
		tokens: map[string]*cardToken{}, keys: map[string]*cardKey{}}
	if err := m.load(context.Background()); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Module) acct(account string) *accountState {
	a := m.accounts[account]
	if a == nil {
		a = &accountState{charges: map[int64]*Charge{}, carnets: map[int64]*Carnet{}}
		m.accounts[account] = a
	}
	return a
}

func (m *Module) load(ctx context.Context) error {
	maxCharge, maxCarnet := int64(firstChargeID-1), int64(firstCarnetID-1)
	err := m.d.Store.Each(ctx, KindCharge, func(account, id string, raw []byte) error {
		var c Charge
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("charges: decode stored charge %s/%s: %w", account, id, err)
		}
		m.indexCharge(&c)
		maxCharge = max(maxCharge, c.ID)
		return nil
	})
	if err != nil {
		return err
	}
	err = m.d.Store.Each(ctx, KindCarnet, func(account, id string, raw []byte) error {
		var c Carnet
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("charges: decode stored carnet %s/%s: %w", account, id, err)
		}
		m.indexCarnet(&c)
		maxCarnet = max(maxCarnet, c.ID)
		for _, p := range c.Parcels {
			maxCharge = max(maxCharge, p.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = m.d.Store.Each(ctx, KindCardToken, func(account, id string, raw []byte) error {
		var t cardToken
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("charges: decode stored card token: %w", err)
		}
		m.tokens[id] = &t
		return nil
	})
	if err != nil {
		return err
	}
	err = m.d.Store.Each(ctx, KindCardKey, func(account, id string, raw []byte) error {
		k, err := decodeCardKey(raw)
		if err != nil {
			return fmt.Errorf("charges: decode tokenization key of %s: %w", account, err)
		}
		m.keys[account] = k
		return nil
	})
	if err != nil {
		return err
	}
	if s, err := m.d.Store.Seq(ctx, seqCharge); err == nil {
		maxCharge = max(maxCharge, s)
	} else {
		return err
	}
	if s, err := m.d.Store.Seq(ctx, seqCarnet); err == nil {
		maxCarnet = max(maxCarnet, s)
	} else {
		return err
	}
	m.nextCharge.Store(maxCharge)
	m.nextCarnet.Store(maxCarnet)
	return nil
}

// indexCharge puts a standalone charge in the maps (caller holds mu or is
// loading).
func (m *Module) indexCharge(c *Charge) {
	m.acct(c.Account).charges[c.ID] = c
	r := ref{account: c.Account, chargeID: c.ID}
	if c.NotifToken != "" {
		m.notif[c.NotifToken] = r
	}
	m.docs[c.DocToken] = r
}

// indexCarnet puts a carnet and its parcels in the maps.
func (m *Module) indexCarnet(c *Carnet) {
	a := m.acct(c.Account)
	a.carnets[c.ID] = c
	m.notif[c.NotifToken] = ref{account: c.Account, carnetID: c.ID}
	m.docs[c.DocToken] = ref{account: c.Account, carnetID: c.ID}
	for _, p := range c.Parcels {
		a.charges[p.ID] = p
		m.docs[p.DocToken] = ref{account: c.Account, chargeID: p.ID, carnetID: c.ID}
	}
}

// allocCharges reserves n consecutive charge ids.
func (m *Module) allocCharges(n int) int64 {
	return m.nextCharge.Add(int64(n)) - int64(n) + 1
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// notificationToken is a UUID-shaped random token.
func notificationToken() string {
	h := randomHex(16)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (m *Module) now() time.Time { return m.d.Clock.Now() }

func ptr[T any](v T) *T { return &v }

// --- status changes -----------------------------------------------------

// update collects the effects of one mutation: the owner being changed
// (a standalone charge or a carnet) and whether notification changes were
// appended.
type update struct {
	now      time.Time
	charge   *Charge // standalone owner
	carnet   *Carnet // carnet owner
	notified bool
	retarget bool       // notification_url changed: pending deliveries follow it
	tokenID  string     // card token used by this mutation
	token    *cardToken // its new state (Used)
	raw      []byte     // the owner already encoded (encodeOwner); nil: persist encodes it
}

// encodeOwner encodes the owner of u for persist, which then only writes it.
func (u *update) encodeOwner() {
	var v any = u.charge
	if u.carnet != nil {
		v = u.carnet
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("charges: encode: %v", err)) // our own types always encode
	}
	u.raw = raw
}

// putOwner writes v, the owner of u, under (kind, account, id).
func (u *update) putOwner(tx *store.Tx, kind, account string, id int64, v any) error {
	key := strconv.FormatInt(id, 10)
	if u.raw != nil {
		return tx.PutRaw(kind, account, key, u.raw)
	}
	return tx.Put(kind, account, key, v)
}

func (u *update) history(c *Charge, msg string) {
	c.History = append(c.History, HistoryEntry{Message: msg, CreatedAt: u.now})
}

// setStatus moves charge c to status to, adding msg to its history and a
// change to its notification token; extra may fill payment fields.
func (u *update) setStatus(c *Charge, to, msg string, extra func(*Change)) {
	prev := c.Status
	c.Status = to
	if msg != "" {
		u.history(c, msg)
	}
	ch := Change{Type: "charge", Status: ChangeStatus{Current: to}, CreatedAt: efiTime(u.now),
		Identifiers: Identifiers{ChargeID: c.ID}}
	if prev != "" {
		ch.Status.Previous = ptr(prev)
	}
	if extra != nil {
		extra(&ch)
	}
	if c.CarnetID != 0 && u.carnet != nil {
		ch.Type = "carnet_charge"
		ch.Identifiers.CarnetID = c.CarnetID
		ch.CustomID = u.carnet.CustomID
		ch.ID = len(u.carnet.Changes) + 1
		u.carnet.Changes = append(u.carnet.Changes, ch)
	} else {
		ch.CustomID = c.CustomID
		ch.ID = len(c.Changes) + 1
		c.Changes = append(c.Changes, ch)
	}
	u.notified = true
}

// setCarnetStatus moves a carnet to status to.
func (u *update) setCarnetStatus(cn *Carnet, to, msg string) {
	prev := cn.Status
	cn.Status = to
	if msg != "" {
		cn.History = append(cn.History, HistoryEntry{Message: msg, CreatedAt: u.now})
	}
	ch := Change{ID: len(cn.Changes) + 1, Type: "carnet", CustomID: cn.CustomID,
		Status: ChangeStatus{Current: to}, CreatedAt: efiTime(u.now), Identifiers: Identifiers{CarnetID: cn.ID}}
	if prev != "" {
		ch.Status.Previous = ptr(prev)
	}
	cn.Changes = append(cn.Changes, ch)
	u.notified = true
}

// syncCarnet recomputes the carnet status after parcel changes.
func (u *update) syncCarnet(cn *Carnet) {
	if s := carnetStatus(cn); s != cn.Status {
		u.setCarnetStatus(cn, s, carnetStatusMessage(s))
	}
}

func carnetStatusMessage(s string) string {
	switch s {
	case CarnetUnpaid:
		return "Carnê com parcela vencida"
	case CarnetFinished:
		return "Carnê finalizado"
	case CarnetUpToDate:
		return "Carnê em dia"
	case CarnetCanceled:
		return "Carnê cancelado"
	}
	return ""
}

// refresh applies the time-based transitions to c as of u.now: a slip
// still waiting the day after its due date becomes unpaid; a payment link
// past its expire_at becomes expired.
func (u *update) refresh(c *Charge) bool {
	today := rules.Today(u.now)
	switch {
	case c.Status == StatusWaiting && c.Payment != nil && c.Payment.Billet != nil:
		due, err := rules.ParseISODate(c.Payment.Billet.ExpireAt)
		if err == nil && today.After(due) {
			u.setStatus(c, StatusUnpaid, "Cobrança vencida sem pagamento", nil)
			return true
		}
	case c.Status == StatusLink && c.Link != nil:
		exp, err := rules.ParseISODate(c.Link.ExpireAt)
		if err == nil && today.After(exp) {
			u.setStatus(c, StatusExpired, "Link de pagamento expirado", nil)
			return true
		}
	}
	return false
}

// needsRefresh reports whether refresh would change c (read lock is
// enough).
func needsRefresh(c *Charge, today time.Time) bool {
	var date string
	switch {
	case c.Status == StatusWaiting && c.Payment != nil && c.Payment.Billet != nil:
		date = c.Payment.Billet.ExpireAt
	case c.Status == StatusLink && c.Link != nil:
		date = c.Link.ExpireAt
	default:
		return false
	}
	d, err := rules.ParseISODate(date)
	return err == nil && today.After(d)
}

// --- persistence ----------------------------------------------------------

func cloneJSON[T any](v *T) *T {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("charges: clone: %v", err)) // our own types always encode
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		panic(fmt.Sprintf("charges: clone: %v", err))
	}
	return out
}

// persist writes the owner of u (and queues its notification) in tx.
func (m *Module) persist(ctx context.Context, tx *store.Tx, u *update) error {
	var url *string
	var token string
	if u.carnet != nil {
		if err := u.putOwner(tx, KindCarnet, u.carnet.Account, u.carnet.ID, u.carnet); err != nil {
			return err
		}
		url, token = u.carnet.NotificationURL, u.carnet.NotifToken
	}
	if u.charge != nil {
		if err := u.putOwner(tx, KindCharge, u.charge.Account, u.charge.ID, u.charge); err != nil {
			return err
		}
		url, token = u.charge.NotificationURL, u.charge.NotifToken
	}
	if u.token != nil {
		if err := tx.Put(KindCardToken, u.token.Account, u.tokenID, u.token); err != nil {
			return err
		}
	}
	to := ""
	if url != nil {
		to = *url
	}
	rt, keyed := m.d.Notify.(module.Retargeter)
	if u.retarget && keyed {
		// The deliveries still pending for this token go to the new URL, or
		// are given up when there is none (the real service posts only to
		// the notification_url the charge has).
		if _, err := rt.Retarget(ctx, tx, notifyKey(token), to); err != nil {
			return fmt.Errorf("charges: retarget pending notifications: %w", err)
		}
	}
	if u.notified && to != "" && m.d.Notify != nil {
		body, ct := []byte("notification="+token), "application/x-www-form-urlencoded"
		var err error
		if keyed {
			err = rt.EnqueueFor(ctx, tx, notifyKey(token), to, body, ct)
		} else {
			err = m.d.Notify.Enqueue(ctx, tx, to, body, ct)
		}
		if err != nil {
			return fmt.Errorf("charges: queue notification: %w", err)
		}
	}
	return nil
}

// notifyKey names a notification token's deliveries in the outbox.
func notifyKey(token string) string { return "charges/" + token }

// swap installs the updated owner in the maps (caller holds mu).
func (m *Module) swap(u *update) {
	if u.token != nil {
		m.tokens[u.tokenID] = u.token
	}
	if u.carnet != nil {
		m.indexCarnet(u.carnet)
	}
	if u.charge != nil {
		m.indexCharge(u.charge)
	}
}

// mutateCharge runs fn on a copy of charge id of account (standalone or
// parcel), persists the result and installs it. fn's *Error refuses the
// operation without writing.
func (m *Module) mutateCharge(ctx context.Context, account string, id int64, fn func(u *update, c *Charge) *Error) (*Charge, *Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.accounts[account]
	if a == nil || a.charges[id] == nil {
		return nil, chargeNotFound()
	}
	orig := a.charges[id]
	u := &update{now: m.now()}
	var c *Charge
	if orig.CarnetID != 0 {
		u.carnet = cloneJSON(a.carnets[orig.CarnetID])
		c = u.carnet.Parcels[orig.Parcel-1]
	} else {
		u.charge = cloneJSON(orig)
		c = u.charge
	}
	u.refresh(c)
	if e := fn(u, c); e != nil {
		return nil, e
	}
	if u.carnet != nil {
		u.syncCarnet(u.carnet)
	}
	if err := m.d.Store.Tx(ctx, func(tx *store.Tx) error { return m.persist(ctx, tx, u) }); err != nil {
		m.log.Error().Err(err).Int64("charge_id", id).Msg("persist charge")
		return nil, errInternal
	}
	m.swap(u)
	return c, nil
}

// mutateCarnet is mutateCharge for a whole carnet.
func (m *Module) mutateCarnet(ctx context.Context, account string, id int64, fn func(u *update, cn *Carnet) *Error) (*Carnet, *Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.accounts[account]
	if a == nil || a.carnets[id] == nil {
		return nil, carnetNotFound()
	}
	u := &update{now: m.now(), carnet: cloneJSON(a.carnets[id])}
	for _, p := range u.carnet.Parcels {
		u.refresh(p)
	}
	u.syncCarnet(u.carnet)
	if e := fn(u, u.carnet); e != nil {
		return nil, e
	}
	u.syncCarnet(u.carnet)
	if err := m.d.Store.Tx(ctx, func(tx *store.Tx) error { return m.persist(ctx, tx, u) }); err != nil {
		m.log.Error().Err(err).Int64("carnet_id", id).Msg("persist carnet")
		return nil, errInternal
	}
	m.swap(u)
	return u.carnet, nil
}

// --- reads with lazy time-based transitions ----------------------------------

// getCharge returns a snapshot of charge id, applying due transitions
// first. The returned charge must not be modified.
func (m *Module) getCharge(ctx context.Context, account string, id int64) (*Charge, *Carnet, *Error) {
	today := rules.Today(m.now())
	m.mu.RLock()
	a := m.accounts[account]
	var c *Charge
	if a != nil {
		c = a.charges[id]
	}
	if c == nil {
		m.mu.RUnlock()
		return nil, nil, chargeNotFound()
	}
	if !needsRefresh(c, today) {
		var cn *Carnet
		if c.CarnetID != 0 {
			cn = a.carnets[c.CarnetID]
		}
		m.mu.RUnlock()
		return c, cn, nil
	}
	m.mu.RUnlock()
	c, e := m.mutateCharge(ctx, account, id, func(*update, *Charge) *Error { return nil })
	if e != nil {
		return nil, nil, e
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var cn *Carnet
	if c.CarnetID != 0 {
		cn = m.accounts[account].carnets[c.CarnetID]
	}
	return c, cn, nil
}

func (m *Module) getCarnet(ctx context.Context, account string, id int64) (*Carnet, *Error) {
	today := rules.Today(m.now())
	m.mu.RLock()
	a := m.accounts[account]
	var cn *Carnet
	if a != nil {
		cn = a.carnets[id]
	}
	if cn == nil {
		m.mu.RUnlock()
		return nil, carnetNotFound()
	}
	stale := false
	for _, p := range cn.Parcels {
		if needsRefresh(p, today) {
			stale = true
			break
		}
	}
	m.mu.RUnlock()
	if !stale {
		return cn, nil
	}
	return m.mutateCarnet(ctx, account, id, func(*update, *Carnet) *Error { return nil })
}

// Tick applies every due time-based transition (slips past due → unpaid,
// links past expire_at → expired, carnet status) as of Deps.Clock.Now(),
// writing each to the history and the notification changes. The clock
// control calls it after moving the clock; reads also apply them lazily.
func (m *Module) Tick(ctx context.Context) error {
	today := rules.Today(m.now())
	type target struct {
		account string
		id      int64
		carnet  bool
	}
	var todo []target
	m.mu.RLock()
	for acc, a := range m.accounts {
		for id, c := range a.charges {
			if c.CarnetID == 0 && needsRefresh(c, today) {
				todo = append(todo, target{acc, id, false})
			}
		}
		for id, cn := range a.carnets {
			for _, p := range cn.Parcels {
				if needsRefresh(p, today) {
					todo = append(todo, target{acc, id, true})
					break
				}
			}
		}
	}
	m.mu.RUnlock()
	for _, t := range todo {
		var e *Error
		if t.carnet {
			_, e = m.mutateCarnet(ctx, t.account, t.id, func(*update, *Carnet) *Error { return nil })
		} else {
			_, e = m.mutateCharge(ctx, t.account, t.id, func(*update, *Charge) *Error { return nil })
		}
		if e != nil && e.Code != CodeNotFound {
			return e
		}
	}
	return nil
}

// principalError answers 401 when a handler runs without a principal
// (only possible if the module is mounted without the auth middleware).
func principalError(w http.ResponseWriter) {
	(&Error{Status: http.StatusUnauthorized, Code: 401, Slug: "unauthorized", Desc: "Credenciais ausentes"}).write(w)
}
