// Package charges is the sandbox's Charges API (/v1): charges, slips, card
// payments, payment links, carnets, marketplace split, notifications and
// the sandbox form of card tokenization.
//
// State lives in the store (sandbox/store), read through bounded caches,
// with an index row per charge or parcel for the listing and the due
// transitions and aliases for the tokens (state.go); a mutation reads its
// owner inside the write transaction that persists it before the answer,
// so an acknowledged write survives kill -9 and several instances over one
// PostgreSQL serve one state. A carnet and its parcels are one stored
// document; a standalone charge is one document.
package charges

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
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

// Module serves the charges API.
type Module struct {
	d   module.Deps
	log zerolog.Logger

	// Documents are read from the store through bounded caches (state.go);
	// every decision that leads to a write reads inside its transaction.
	charges *store.Cache[Charge]    // standalone charges
	carnets *store.Cache[Carnet]    // carnets with their parcels
	tokens  *store.Cache[cardToken] // card payment tokens
	keys    *store.Cache[cardKey]   // tokenization keys, one per account
	owners  ownerCache              // charge id -> its carnet (never changes)
	ids     idAlloc

	keyMu sync.Mutex
}

// New builds the module over d.Store.
func New(d module.Deps) (*Module, error) {
	if d.Store == nil || d.Clock == nil {
		return nil, errors.New("charges: Deps.Store and Deps.Clock are required")
	}
	m := &Module{d: d, log: d.Logger.With().Str("module", "charges").Logger()}
	m.initState()
	if err := m.migrate(context.Background()); err != nil {
		return nil, err
	}
	if err := m.ids.init(context.Background(), d.Store); err != nil {
		return nil, err
	}
	return m, nil
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
	retarget bool                  // notification_url changed: pending deliveries follow it
	tokenID  string                // card token used by this mutation
	token    *cardToken            // its new state (Used)
	raw      []byte                // the owner already encoded (encodeOwner); nil: persist encodes it
	tx       *store.Tx             // the write transaction the mutation runs in
	created  bool                  // a new owner: its aliases are written
	before   map[int64]store.Index // index rows of the owner before the mutation
}

// encodeOwner encodes the owner of u for persist, which then only writes it.
func (u *update) encodeOwner() {
	var raw []byte
	var err error
	if u.carnet != nil {
		raw, err = encodeCarnet("", "", u.carnet)
	} else {
		raw, err = encodeCharge("", "", u.charge)
	}
	if err != nil {
		panic(fmt.Sprintf("charges: encode: %v", err)) // our own types always encode
	}
	u.raw = raw
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

// persist writes the owner of u, its index rows and aliases (and queues
// its notification) in tx.
func (m *Module) persist(ctx context.Context, tx *store.Tx, u *update) error {
	var url *string
	var token string
	if u.carnet != nil {
		if u.raw != nil {
			if err := m.carnets.PutRaw(tx, u.carnet.Account, idKey(u.carnet.ID), u.raw, u.carnet); err != nil {
				return err
			}
		} else if err := m.carnets.Put(tx, u.carnet.Account, idKey(u.carnet.ID), u.carnet); err != nil {
			return err
		}
		url, token = u.carnet.NotificationURL, u.carnet.NotifToken
	}
	if u.charge != nil {
		if u.raw != nil {
			if err := m.charges.PutRaw(tx, u.charge.Account, idKey(u.charge.ID), u.raw, u.charge); err != nil {
				return err
			}
		} else if err := m.charges.Put(tx, u.charge.Account, idKey(u.charge.ID), u.charge); err != nil {
			return err
		}
		url, token = u.charge.NotificationURL, u.charge.NotifToken
	}
	if err := m.writeIndex(tx, u); err != nil {
		return err
	}
	if u.token != nil {
		if err := m.tokens.Put(tx, u.token.Account, u.tokenID, u.token); err != nil {
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

// errRefused rolls a mutation's transaction back for a refusal.
var errRefused = errors.New("charges: refused")

// mutate runs load and fn in one write transaction: load reads the owner
// (inside the transaction) into a fresh update; fn's *Error refuses the
// operation without writing; otherwise the owner is persisted.
func (m *Module) mutate(ctx context.Context, load func(tx *store.Tx, u *update) (*Charge, *Error), fn func(u *update, c *Charge) *Error) *Error {
	var refusal *Error
	err := m.d.Store.Tx(ctx, func(tx *store.Tx) error {
		u := &update{now: m.now(), tx: tx}
		c, e := load(tx, u)
		if e == nil {
			e = fn(u, c)
		}
		if e != nil {
			if e == errInternal {
				return errors.New("charges: internal error while reading")
			}
			refusal = e
			return errRefused
		}
		if u.carnet != nil {
			u.syncCarnet(u.carnet)
		}
		tx.Final() // refusals are decided: persist fails only by a store error
		return m.persist(ctx, tx, u)
	})
	if refusal != nil {
		return refusal
	}
	if err != nil {
		m.log.Error().Err(err).Msg("persist charge")
		return errInternal
	}
	return nil
}

// mutateCharge runs fn on a copy of charge id of account (standalone or
// parcel) inside a write transaction and persists the result. fn's *Error
// refuses the operation without writing.
func (m *Module) mutateCharge(ctx context.Context, account string, id int64, fn func(u *update, c *Charge) *Error) (*Charge, *Error) {
	var out *Charge
	e := m.mutate(ctx, func(tx *store.Tx, u *update) (*Charge, *Error) {
		c, cn, err := m.readCharge(ctx, tx, account, id)
		if err != nil {
			m.log.Error().Err(err).Int64("charge_id", id).Msg("read charge")
			return nil, errInternal
		}
		if c == nil {
			return nil, chargeNotFound()
		}
		if cn != nil {
			u.carnet = cloneJSON(cn)
			u.before = indexRows(u.carnet, nil)
			c = u.carnet.Parcels[c.Parcel-1]
		} else {
			u.charge = cloneJSON(c)
			u.before = indexRows(nil, u.charge)
			c = u.charge
		}
		u.refresh(c)
		out = c
		return c, nil
	}, fn)
	if e != nil {
		return nil, e
	}
	return out, nil
}

// mutateCarnet is mutateCharge for a whole carnet.
func (m *Module) mutateCarnet(ctx context.Context, account string, id int64, fn func(u *update, cn *Carnet) *Error) (*Carnet, *Error) {
	var out *Carnet
	e := m.mutate(ctx, func(tx *store.Tx, u *update) (*Charge, *Error) {
		cn, err := m.carnets.TxGet(tx, account, idKey(id))
		if err != nil {
			m.log.Error().Err(err).Int64("carnet_id", id).Msg("read carnet")
			return nil, errInternal
		}
		if cn == nil {
			return nil, carnetNotFound()
		}
		u.carnet = cloneJSON(cn)
		u.before = indexRows(u.carnet, nil)
		for _, p := range u.carnet.Parcels {
			u.refresh(p)
		}
		u.syncCarnet(u.carnet)
		out = u.carnet
		return nil, nil
	}, func(u *update, _ *Charge) *Error {
		if e := fn(u, u.carnet); e != nil {
			return e
		}
		return nil
	})
	if e != nil {
		return nil, e
	}
	return out, nil
}

// --- reads with lazy time-based transitions ----------------------------------

// getCharge returns a snapshot of charge id, applying due transitions
// first. The returned charge must not be modified.
func (m *Module) getCharge(ctx context.Context, account string, id int64) (*Charge, *Carnet, *Error) {
	today := rules.Today(m.now())
	c, cn, err := m.readCharge(ctx, nil, account, id)
	if err != nil {
		m.log.Error().Err(err).Int64("charge_id", id).Msg("read charge")
		return nil, nil, errInternal
	}
	if c == nil {
		return nil, nil, chargeNotFound()
	}
	if !needsRefresh(c, today) {
		return c, cn, nil
	}
	c, e := m.mutateCharge(ctx, account, id, func(*update, *Charge) *Error { return nil })
	if e != nil {
		return nil, nil, e
	}
	if c.CarnetID != 0 {
		if cn, err = m.carnets.Get(ctx, account, idKey(c.CarnetID)); err != nil {
			return nil, nil, errInternal
		}
		if cn != nil {
			c = cn.Parcels[c.Parcel-1]
		}
	}
	return c, cn, nil
}

func (m *Module) getCarnet(ctx context.Context, account string, id int64) (*Carnet, *Error) {
	today := rules.Today(m.now())
	cn, err := m.carnets.Get(ctx, account, idKey(id))
	if err != nil {
		m.log.Error().Err(err).Int64("carnet_id", id).Msg("read carnet")
		return nil, errInternal
	}
	if cn == nil {
		return nil, carnetNotFound()
	}
	stale := false
	for _, p := range cn.Parcels {
		if needsRefresh(p, today) {
			stale = true
			break
		}
	}
	if !stale {
		return cn, nil
	}
	return m.mutateCarnet(ctx, account, id, func(*update, *Carnet) *Error { return nil })
}

// Tick applies every due time-based transition (slips past due → unpaid,
// links past expire_at → expired, carnet status) as of Deps.Clock.Now(),
// writing each to the history and the notification changes. The clock
// control calls it after moving the clock; reads also apply them lazily.
// Only the charges the index says are due are read.
func (m *Module) Tick(ctx context.Context) error {
	if m.d.Auth == nil {
		return nil
	}
	for _, a := range m.d.Auth.Accounts() {
		if e := m.refreshAccount(ctx, a.ID); e != nil {
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
