package charges

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// kindResend keeps every e-mail the resend routes were asked to send, in
// the same transaction as the charge's history entry, so a tester can list
// them (GET /sandbox/resends) and count what a client sent.
const kindResend = "sandbox_resend"

// Resend is one accepted resend request: what the service would have
// e-mailed, to whom.
type Resend struct {
	Seq      int64  `json:"seq"`
	Account  string `json:"account"`
	Route    string `json:"route"` // "carnet", "parcel", "billet" or "link"
	Email    string `json:"email"`
	CarnetID int64  `json:"carnet_id,omitempty"`
	Parcel   int    `json:"parcel,omitempty"`
	ChargeID int64  `json:"charge_id,omitempty"`
	At       string `json:"at"` // the sandbox clock, RFC 3339
}

// recordResend writes r in the mutation's transaction (it is kept only if
// the resend is).
func (u *update) recordResend(account string, r Resend) error {
	seq, err := u.tx.NextSeq(kindResend)
	if err != nil {
		return err
	}
	r.Seq, r.Account, r.At = seq, account, u.now.UTC().Format(time.RFC3339)
	return u.tx.Put(kindResend, account, fmt.Sprintf("%012d", seq), r)
}

// Resends lists the resends accepted so far, oldest first: of account
// ("" = every account) with a Seq above after.
func (m *Module) Resends(ctx context.Context, account string, after int64) ([]Resend, error) {
	out := []Resend{}
	add := func(raw []byte) error {
		var r Resend
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("charges: resend record: %w", err)
		}
		if r.Seq > after {
			out = append(out, r)
		}
		return nil
	}
	var err error
	if account != "" {
		err = m.d.Store.EachIn(ctx, kindResend, account, func(_ string, raw []byte) error { return add(raw) })
	} else {
		err = m.d.Store.Each(ctx, kindResend, func(_, _ string, raw []byte) error { return add(raw) })
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// resent records a resend for the handlers, as an internal error when the
// store refuses it (the resend then is not kept either).
func (u *update) resent(account string, r Resend) *Error {
	if err := u.recordResend(account, r); err != nil {
		return errInternal
	}
	return nil
}
