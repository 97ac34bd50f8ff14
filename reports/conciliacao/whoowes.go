package conciliacao

import (
	"context"
	"sort"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/status"
)

// Debtor is one payer who owes ("quem deve"): a row of the run (a carnet,
// a slip, a cobv) with charges overdue or paid short.
type Debtor struct {
	SourceRow    int    `json:"source_row"`
	Key          string `json:"key"`
	Payer        string `json:"payer"`
	Email        string `json:"email,omitempty"`
	Phone        string `json:"phone,omitempty"`
	Overdue      int    `json:"overdue_charges"`           // charges (parcels) overdue
	Parcels      []int  `json:"overdue_parcels,omitempty"` // which parcels (carnets)
	Face         int64  `json:"face_cents"`                // their value as issued
	FineInterest int64  `json:"fine_interest_today_cents"` // what the terms add to them today
	Short        int64  `json:"short_cents"`               // paid short, still owed
	Total        int64  `json:"total_cents"`               // Face + FineInterest + Short
	DaysLate     int    `json:"days_late"`                 // of the oldest overdue charge
	OldestDue    string `json:"oldest_due,omitempty"`      // YYYY-MM-DD
}

// debtors gathers who owes as lines stream by in row order.
type debtors struct {
	cur  *Debtor
	row  int
	list []Debtor
}

func (d *debtors) add(l *Line) {
	owes := l.State == "overdue" || l.Short > 0
	if d.cur != nil && d.row != l.row {
		d.flush()
	}
	if !owes {
		return
	}
	if d.cur == nil {
		d.cur, d.row = &Debtor{SourceRow: l.SourceRow, Key: l.Key, Payer: l.Payer}, l.row
		if t := l.terms; t != nil {
			d.cur.Email, d.cur.Phone = t.Email, t.Phone
		}
	}
	c := d.cur
	c.Short += l.Short
	if l.State == "overdue" {
		c.Overdue++
		if l.Parcel > 0 {
			c.Parcels = append(c.Parcels, l.Parcel)
		}
		c.Face += l.Open
		c.FineInterest += l.FineToday
		if l.DaysLate > c.DaysLate {
			c.DaysLate = l.DaysLate
		}
		if c.OldestDue == "" || l.Due < c.OldestDue {
			c.OldestDue = l.Due
		}
	}
}

func (d *debtors) flush() {
	if d.cur != nil {
		d.cur.Total = d.cur.Face + d.cur.FineInterest + d.cur.Short
		d.list = append(d.list, *d.cur)
		d.cur = nil
	}
}

// close returns who owes, the largest amount first (then the oldest
// debt, then the key).
func (d *debtors) close() []Debtor {
	d.flush()
	SortDebtors(d.list)
	if d.list == nil {
		return []Debtor{}
	}
	return d.list
}

// SortDebtors sorts who owes by amount, largest first (then by days late,
// then by key), as every "Quem deve" table shows them.
func SortDebtors(ds []Debtor) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := &ds[i], &ds[j]
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		if a.DaysLate != b.DaysLate {
			return a.DaysLate > b.DaysLate
		}
		return a.Key < b.Key
	})
}

// WhoOwes returns who owes in the run in dir as of asOf (the service's
// day): each payer with charges overdue or paid short, with their
// contact, the overdue charges' value, the fine and interest their terms
// ask on asOf, what was paid short and the days late, the largest amount
// first. It reads the run's status ledger (bring it up to date with
// status.Sync first) and its journal (the terms and the contact), in
// constant memory but for the list.
func WhoOwes(ctx context.Context, dir string, asOf time.Time) ([]Debtor, error) {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	r := newReconciliation(&results.RunInfo{}, "", asOf)
	if err := stream(ctx, dir, l, r, asOf, nil); err != nil {
		return nil, err
	}
	return r.WhoOwes, nil
}

// stream reconciles the run in dir from its ledger l and its journal into
// r, calling each (when not nil) with every line as it is made; r gets the
// totals and who owes, not the lines.
func stream(ctx context.Context, dir string, l *status.Ledger, r *Reconciliation, today time.Time, each func(*Line) error) error {
	tr, err := openTerms(ctx, dir)
	if err != nil {
		return err
	}
	defer tr.close()
	a := newAccumulator(today)
	if err := l.EachCharge(ctx, func(c *status.Charge) error {
		t, err := tr.of(c.RowIndex)
		if err != nil {
			return err
		}
		ln := line(c, t, today)
		a.add(&ln)
		if each != nil {
			return each(&ln)
		}
		return nil
	}); err != nil {
		return err
	}
	a.close(r)
	r.streamedLines = a.lines
	return nil
}

// EachLine calls fn with every charge of the run in dir (as its status
// ledger has it: bring it up to date with status.Sync first) and its line
// as of today, in row and parcel order, with the terms its journal kept:
// the split of each payment into discount, abatimento, fine and interest,
// paid short or over, as the reconciliation makes it. It reads in constant
// memory (charge and line are reused between calls: copy what you keep).
// The retorno (pipeline/retorno) takes its values from here.
func EachLine(ctx context.Context, dir string, today time.Time, fn func(c *status.Charge, l *Line) error) error {
	l, err := status.OpenLedger(dir)
	if err != nil {
		return err
	}
	defer l.Close()
	tr, err := openTerms(ctx, dir)
	if err != nil {
		return err
	}
	defer tr.close()
	return l.EachCharge(ctx, func(c *status.Charge) error {
		t, err := tr.of(c.RowIndex)
		if err != nil {
			return err
		}
		ln := line(c, t, today)
		return fn(c, &ln)
	})
}
