package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// Targets of an item: what one call changes.
const (
	TargetCarnet  = "carnet"  // the whole carnet (its open parcels)
	TargetParcel  = "parcel"  // one parcel of a carnet
	TargetParcels = "parcels" // several parcels of a carnet (change_due_date: PUT /v1/carnet/:id/parcels)
	TargetCharge  = "charge"  // a slip
	TargetCobv    = "cobv"    // a due-date Pix charge
)

// ChargeRef is one charge an item changes.
type ChargeRef struct {
	Key        string `json:"key"` // ledger key
	Parcel     int    `json:"parcel,omitempty"`
	ChargeID   int64  `json:"charge_id,omitempty"`
	Txid       string `json:"txid,omitempty"`
	Due        string `json:"due"`
	NewDue     string `json:"new_due,omitempty"`
	ValueCents int64  `json:"value_cents"`
	Status     string `json:"status"`
	// abatimento: the cobv's abatimento before (-1 unknown: a percentage)
	// and the one it is set to (0: removed), in cents
	RebateBefore int64 `json:"rebate_before_cents,omitempty"`
	NewRebate    int64 `json:"new_rebate_cents,omitempty"`
}

// Item is one call of the action: what it changes, for which row.
type Item struct {
	Kind      string      `json:"kind"`
	Target    string      `json:"target"`
	RowIndex  int         `json:"row_index"`
	SourceRow int         `json:"source_row"`
	RowKey    string      `json:"row_key"`
	Payer     string      `json:"payer"`
	CarnetID  int64       `json:"carnet_id,omitempty"`
	Parcel    int         `json:"parcel,omitempty"`
	ChargeID  int64       `json:"charge_id,omitempty"`
	Txid      string      `json:"txid,omitempty"`
	Charges   []ChargeRef `json:"charges"`
	Email     string      `json:"email,omitempty"`
	PDF       string      `json:"pdf,omitempty"`
	Cents     int64       `json:"amount_cents"`
	Text      string      `json:"text"`
}

// Skip is a charge (or row) the action does not apply to, and why.
type Skip struct {
	RowKey    string `json:"row_key"`
	SourceRow int    `json:"source_row"`
	What      string `json:"what"`
	Reason    string `json:"reason"` // "não se aplica: já paga"
	Cents     int64  `json:"amount_cents"`
}

// Plan is what the action will do.
type Plan struct {
	Name        string         `json:"name"`
	Kind        string         `json:"kind"`
	SourceDir   string         `json:"source_dir"`
	SourceRunID string         `json:"source_run_id"`
	RunKind     results.Kind   `json:"run_kind"`
	Items       []Item         `json:"items"`
	Skipped     []Skip         `json:"skipped,omitempty"`
	Rows        int            `json:"rows"`                   // rows with something to do
	Charges     int            `json:"charges"`                // charges the items change
	Cents       int64          `json:"amount_cents"`           // their value
	Calls       map[string]int `json:"calls"`                  // per route
	UnknownKeys []string       `json:"unknown_keys,omitempty"` // keys asked for that the run does not have
	// Today is the service's day the plan counted from (due dates past,
	// "hoje", "+5d"); ClockNote the warning when the service's clock and
	// this machine's differ by more than a minute (status.ClockNote).
	Today     string `json:"today,omitempty"`
	ClockNote string `json:"clock_note,omitempty"`

	earlier map[string]string // resend, change_due_date by days: charges an earlier action of this same job did → why not again
	issued  map[int]int64     // abatimento: each row's abatimento as issued, in cents (-1: a percentage)
}

// BuildPlan reads the source run's results and ledger (the caller brings
// the ledger up to date first: Prepare does) and works out the items.
func BuildPlan(ctx context.Context, j *Job) (*Plan, error) {
	res, err := results.Load(filepath.Join(j.SourceDir, "results.json"))
	if err != nil {
		return nil, err
	}
	l, err := status.OpenLedger(j.SourceDir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if _, err := l.Seed(ctx, res, j.Now); err != nil {
		return nil, err
	}
	charges, err := l.Charges(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plan{Name: j.Name, Kind: j.Kind, SourceDir: j.SourceDir, SourceRunID: res.Run.ID, RunKind: res.Run.Kind, Calls: map[string]int{}}
	p.earlier = earlierEffects(ctx, j)
	if j.Kind == Abatimento {
		p.issued = issuedRebates(ctx, j.SourceDir)
	}
	var emails map[int]string
	if j.Kind == Resend && j.Email == "" {
		emails = payerEmails(ctx, j.SourceDir)
	}
	byRow := map[int]*results.Row{}
	for i := range res.Rows {
		byRow[res.Rows[i].Index] = &res.Rows[i]
	}
	today := rules.FormatISODate(j.Today)
	// charges by row, in order
	var order []int
	group := map[int][]status.Charge{}
	for _, c := range charges {
		if _, ok := group[c.RowIndex]; !ok {
			order = append(order, c.RowIndex)
		}
		group[c.RowIndex] = append(group[c.RowIndex], c)
	}
	for _, ri := range order {
		row := byRow[ri]
		all := group[ri]
		if row == nil || len(all) == 0 || (j.Keys != nil && !j.Keys[row.Key]) {
			continue
		}
		var matched []status.Charge
		for _, c := range all {
			if j.matches(&c, today) {
				matched = append(matched, c)
			}
		}
		if len(matched) == 0 {
			continue
		}
		before := len(p.Items)
		p.planRow(j, row, all, matched, today, emails)
		if len(p.Items) > before {
			p.Rows++
		}
	}
	if j.Keys != nil {
		have := map[string]bool{}
		for i := range res.Rows {
			have[res.Rows[i].Key] = true
		}
		for k := range j.Keys {
			if !have[k] {
				p.UnknownKeys = append(p.UnknownKeys, k)
			}
		}
		slices.Sort(p.UnknownKeys)
	}
	for _, it := range p.Items {
		p.Charges += len(it.Charges)
		p.Cents += it.Cents
		if r := route(it); r != "" {
			p.Calls[r]++
		}
	}
	return p, nil
}

// earlierEffects keeps a second run of the same job file from applying
// again what is not idempotent by state: a resend, or a due date moved by
// days (which would move it again). For those kinds it reads the earlier
// action folders of the source run made from a job with the same content
// (same SHA-256 and kind) and returns, by ledger key, why each charge they
// did, may have done or still have under way is not planned again. Items
// those actions skipped or that were refused are planned again.
func earlierEffects(ctx context.Context, j *Job) map[string]string {
	if j.Kind != Resend && (j.Kind != ChangeDueDate || j.Days == 0) {
		return nil
	}
	marks, _ := filepath.Glob(filepath.Join(j.SourceDir, "acoes", "*", MetaFile))
	out := map[string]string{}
	for _, mf := range marks {
		var m Meta
		b, err := os.ReadFile(mf)
		if err != nil || json.Unmarshal(b, &m) != nil || m.JobSHA256 != j.SHA256 || m.Kind != j.Kind {
			continue
		}
		dir := filepath.Dir(mf)
		jn, err := journal.Open(filepath.Join(dir, journal.FileName))
		if err != nil {
			continue
		}
		rows, err := jn.Rows(ctx)
		jn.Close()
		if err != nil {
			continue
		}
		for _, r := range rows {
			var why string
			switch r.State {
			case StateDone:
				why = fmt.Sprintf("não se aplica: já feito pela ação %s deste mesmo job", m.ID)
			case StateUncertain:
				why = fmt.Sprintf("não se aplica: talvez já feito pela ação %s deste mesmo job (incerto)", m.ID)
			case StatePending, StateSending, StateAmbiguous:
				why = fmt.Sprintf("não se aplica: em andamento na ação %s deste mesmo job (remessa resume %s)", m.ID, dir)
			default:
				continue
			}
			var it Item
			if json.Unmarshal(r.Req, &it) != nil {
				continue
			}
			for _, c := range it.Charges {
				out[c.Key] = why
			}
		}
	}
	return out
}

// Matches reports whether the job's filter (status, due dates, parcels;
// not the keys) selects charge c, as the plan selects it: the desk shows
// a selection's charges with it before planning.
func (j *Job) Matches(c *status.Charge) bool { return j.matches(c, rules.FormatISODate(j.Today)) }

// matches applies the filter to one charge.
func (j *Job) matches(c *status.Charge, today string) bool {
	if j.DueBefore != "" && c.Due >= j.DueBefore {
		return false
	}
	if j.DueFrom != "" && c.Due < j.DueFrom {
		return false
	}
	if len(j.Parcels) > 0 && !slices.Contains(j.Parcels, c.Parcel) {
		return false
	}
	if j.Parcel > 0 && c.Parcel != j.Parcel {
		return false
	}
	if len(j.Status) == 0 {
		return true
	}
	st := strings.ToLower(c.Status)
	for _, s := range j.Status {
		switch {
		case s == st, s == c.State:
		case (s == "overdue" || s == "vencida" || s == "vencido") && c.State == status.StateOpen && c.Due < today:
		case (s == "open" || s == "em_aberto" || s == "aberta") && c.State == status.StateOpen:
		case (s == "canceled" || s == "cancelada") && c.State == status.StateCancelled:
		default:
			continue
		}
		return true
	}
	return false
}

// notApplicable says why an action does not apply to a charge in its state
// ("" when it applies).
func notApplicable(kind string, c *status.Charge) string {
	if kind == SecondCopy {
		return ""
	}
	switch c.State {
	case status.StatePaid, status.StateSettled:
		return "não se aplica: já paga"
	case status.StateCancelled:
		return "não se aplica: já cancelada"
	case status.StateRefunded:
		return "não se aplica: já estornada"
	}
	return ""
}

func (p *Plan) skip(row *results.Row, what, reason string, cents int64) {
	p.Skipped = append(p.Skipped, Skip{RowKey: row.Key, SourceRow: row.SourceRow, What: what, Reason: reason, Cents: cents})
}

func ref(c *status.Charge) ChargeRef {
	return ChargeRef{Key: c.Key, Parcel: c.Parcel, ChargeID: c.ChargeID, Txid: c.Txid, Due: c.Due, ValueCents: c.ValueCents, Status: c.Status}
}

func what(row *results.Row, c *status.Charge) string {
	switch {
	case c.Parcel > 0:
		return fmt.Sprintf("carnê %d, parcela %d (venc. %s)", row.CarnetID, c.Parcel, brDate(c.Due))
	case c.Txid != "":
		return fmt.Sprintf("cobv %s (venc. %s)", c.Txid, brDate(c.Due))
	}
	return fmt.Sprintf("boleto %d (venc. %s)", c.ChargeID, brDate(c.Due))
}

func (p *Plan) planRow(j *Job, row *results.Row, all, matched []status.Charge, today string, emails map[int]string) {
	var ok []status.Charge
	for _, c := range matched {
		if why := notApplicable(j.Kind, &c); why != "" {
			p.skip(row, what(row, &c), why, c.ValueCents)
			continue
		}
		if why := p.earlier[c.Key]; why != "" {
			p.skip(row, what(row, &c), why, c.ValueCents)
			continue
		}
		if j.Kind == ChangeDueDate {
			nd := newDue(j, row.Key, c.Due)
			switch {
			case nd == c.Due:
				p.skip(row, what(row, &c), "não se aplica: já vence em "+brDate(nd), c.ValueCents)
				continue
			case nd < c.Due:
				p.skip(row, what(row, &c), fmt.Sprintf("não se aplica: a nova data %s é anterior ao vencimento atual (não é possível antecipar)", brDate(nd)), c.ValueCents)
				continue
			case nd <= today:
				p.skip(row, what(row, &c), fmt.Sprintf("não se aplica: a nova data %s não é depois de hoje", brDate(nd)), c.ValueCents)
				continue
			}
		}
		if j.Kind == Abatimento {
			if why := p.rebateSkip(j, row, &c); why != "" {
				p.skip(row, what(row, &c), why, c.ValueCents)
				continue
			}
		}
		ok = append(ok, c)
	}
	if len(ok) == 0 {
		return
	}
	base := Item{Kind: j.Kind, RowIndex: row.Index, SourceRow: row.SourceRow, RowKey: row.Key, Payer: row.PayerName, CarnetID: row.CarnetID}
	isCarnet := ok[0].Parcel > 0
	if j.Kind == Resend {
		base.Email = j.Email
		if base.Email == "" {
			base.Email = emails[row.Index]
		}
		if ok[0].Txid != "" {
			p.skip(row, what(row, &ok[0]), "não se aplica: cobranças Pix não são reenviadas por e-mail", 0)
			return
		}
		if base.Email == "" {
			p.skip(row, what(row, &ok[0]), "não se aplica: o pagador não tem e-mail (use resend: {email: ...})", 0)
			return
		}
	}
	if j.Kind == SecondCopy {
		if row.PDF == "" {
			p.skip(row, "linha "+row.Key, "não se aplica: sem PDF (cobranças Pix não têm boleto)", 0)
			return
		}
		it := base
		it.PDF = row.PDF
		it.Target = TargetCharge
		if isCarnet {
			it.Target = TargetCarnet
		}
		for _, c := range ok {
			it.Charges = append(it.Charges, ref(&c))
		}
		it.Text = fmt.Sprintf("%s de %s: PDF em %s/%s/", docName(row, &ok[0]), row.Key, j.CopyDir, safeName(row.Key))
		p.Items = append(p.Items, it)
		return
	}
	if isCarnet {
		var open int
		for _, c := range all {
			if c.State == status.StateOpen {
				open++
			}
		}
		whole := j.Parcel == 0 && len(j.Parcels) == 0 && len(ok) == open
		switch {
		case j.Kind == ChangeDueDate:
			it := base
			it.Target = TargetParcels
			if len(ok) == 1 {
				it.Target, it.Parcel = TargetParcel, ok[0].Parcel
			}
			var changes []string
			for _, c := range ok {
				r := ref(&c)
				r.NewDue = newDue(j, row.Key, c.Due)
				it.Charges = append(it.Charges, r)
				it.Cents += c.ValueCents
				changes = append(changes, fmt.Sprintf("%d: %s → %s", c.Parcel, brDate(c.Due), brDate(r.NewDue)))
			}
			it.Text = fmt.Sprintf("carnê %d de %s: %s com novo vencimento (%s), %s", row.CarnetID, row.Key, plural(len(ok), "parcela", "parcelas"),
				strings.Join(changes, "; "), rules.FormatBRL(it.Cents))
			p.Items = append(p.Items, it)
		case j.Kind == Resend:
			it := base
			it.Target = TargetCarnet
			if j.Parcel > 0 {
				it.Target, it.Parcel = TargetParcel, j.Parcel
			}
			for _, c := range ok {
				it.Charges = append(it.Charges, ref(&c))
			}
			if it.Parcel > 0 {
				it.Text = fmt.Sprintf("carnê %d de %s, parcela %d: reenviada para %s", row.CarnetID, row.Key, it.Parcel, it.Email)
			} else {
				it.Text = fmt.Sprintf("carnê %d de %s: reenviado para %s", row.CarnetID, row.Key, it.Email)
			}
			p.Items = append(p.Items, it)
		case whole:
			it := base
			it.Target = TargetCarnet
			for _, c := range ok {
				it.Charges = append(it.Charges, ref(&c))
				it.Cents += c.ValueCents
			}
			it.Text = fmt.Sprintf("carnê %d de %s: %s em aberto %s, %s", row.CarnetID, row.Key, plural(len(ok), "parcela", "parcelas"),
				verb(j.Kind, len(ok) > 1), rules.FormatBRL(it.Cents))
			p.Items = append(p.Items, it)
		default:
			for _, c := range ok {
				it := base
				it.Target, it.Parcel, it.ChargeID = TargetParcel, c.Parcel, c.ChargeID
				it.Charges = []ChargeRef{ref(&c)}
				it.Cents = c.ValueCents
				it.Text = fmt.Sprintf("carnê %d de %s, parcela %d (venc. %s): %s, %s", row.CarnetID, row.Key, c.Parcel, brDate(c.Due),
					verb(j.Kind, false), rules.FormatBRL(c.ValueCents))
				p.Items = append(p.Items, it)
			}
		}
		return
	}
	c := ok[0]
	it := base
	it.Charges = []ChargeRef{ref(&c)}
	it.Cents = c.ValueCents
	if c.Txid != "" {
		it.Target, it.Txid = TargetCobv, c.Txid
		if j.Kind == Settle {
			p.skip(row, what(row, &c), "não se aplica: cobranças Pix não têm baixa manual", c.ValueCents)
			return
		}
	} else {
		it.Target, it.ChargeID = TargetCharge, c.ChargeID
	}
	switch j.Kind {
	case ChangeDueDate:
		it.Charges[0].NewDue = newDue(j, row.Key, c.Due)
		it.Text = fmt.Sprintf("%s de %s: vencimento %s → %s, %s", docName(row, &c), row.Key, brDate(c.Due), brDate(it.Charges[0].NewDue), rules.FormatBRL(c.ValueCents))
	case Resend:
		it.Text = fmt.Sprintf("%s de %s: reenviado para %s", docName(row, &c), row.Key, it.Email)
	case Abatimento:
		r := &it.Charges[0]
		r.RebateBefore, r.NewRebate = p.rebateNow(row, &c), newRebate(j, row.Key)
		before := "sem abatimento"
		switch {
		case r.RebateBefore < 0:
			before = "abatimento percentual"
		case r.RebateBefore > 0:
			before = "abatimento " + rules.FormatBRL(r.RebateBefore)
		}
		if r.NewRebate == 0 {
			it.Text = fmt.Sprintf("%s de %s (%s): %s cancelado", docName(row, &c), row.Key, rules.FormatBRL(c.ValueCents), before)
		} else {
			it.Text = fmt.Sprintf("%s de %s (%s): %s → abatimento %s, a pagar %s", docName(row, &c), row.Key, rules.FormatBRL(c.ValueCents), before,
				rules.FormatBRL(r.NewRebate), rules.FormatBRL(c.ValueCents-r.NewRebate))
		}
	default:
		it.Text = fmt.Sprintf("%s de %s (venc. %s): %s, %s", docName(row, &c), row.Key, brDate(c.Due), verb(j.Kind, false), rules.FormatBRL(c.ValueCents))
	}
	p.Items = append(p.Items, it)
}

// newRebate is the abatimento row key's cobv is to have (0: none).
func newRebate(j *Job, key string) int64 {
	if v, ok := j.Rebates[key]; ok {
		return v
	}
	if j.RebateRemove {
		return 0
	}
	return j.Rebate
}

// rebateNow is the abatimento cobv c has: as changed after issuance (the
// ledger), else as issued (-1: a percentage, or unknown).
func (p *Plan) rebateNow(row *results.Row, c *status.Charge) int64 {
	if c.RebateSet {
		return c.RebateCents
	}
	if v, ok := p.issued[row.Index]; ok {
		return v
	}
	return -1
}

// rebateSkip says why an abatimento does not apply to charge c ("" when
// it applies): only a cobv has one, it must be below the charge's value,
// and one it already has is not set again.
func (p *Plan) rebateSkip(j *Job, row *results.Row, c *status.Charge) string {
	if c.Txid == "" {
		return "não se aplica: o serviço não tem abatimento para boletos e carnês (só a cobv tem valor.abatimento)"
	}
	nr, cur := newRebate(j, row.Key), p.rebateNow(row, c)
	switch {
	case nr >= c.ValueCents:
		return fmt.Sprintf("não se aplica: o abatimento de %s não é menor que o valor da cobrança, %s", rules.FormatBRL(nr), rules.FormatBRL(c.ValueCents))
	case cur == nr && nr == 0:
		return "não se aplica: já não tem abatimento"
	case cur == nr:
		return "não se aplica: já tem abatimento de " + rules.FormatBRL(nr)
	}
	return ""
}

// issuedRebates reads each row's abatimento as issued from the source
// run's journal (the requests it sent): cents of a fixed value, 0 for
// none, -1 for a percentage.
func issuedRebates(ctx context.Context, dir string) map[int]int64 {
	out := map[int]int64{}
	for _, r := range sentRequests(ctx, dir) {
		t := conciliacao.ParseTerms(r.Req)
		if t == nil || !t.Cobv {
			continue
		}
		switch a := t.Pix.Abatimento; {
		case a == nil:
			out[r.Index] = 0
		case a.Modalidade == 1:
			out[r.Index] = a.ValorPerc
		default:
			out[r.Index] = -1
		}
	}
	return out
}

// sentRequests is the source run's journaled rows, with the requests it
// sent: none when the journal cannot be read (the plan then knows less,
// and says so where it matters).
func sentRequests(ctx context.Context, dir string) []journal.Row {
	jn, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil
	}
	defer jn.Close()
	rows, err := jn.Rows(ctx)
	if err != nil {
		return nil
	}
	return rows
}

func docName(row *results.Row, c *status.Charge) string {
	switch {
	case c.Parcel > 0:
		return fmt.Sprintf("carnê %d", row.CarnetID)
	case c.Txid != "":
		return "cobv " + c.Txid
	}
	return fmt.Sprintf("boleto %d", c.ChargeID)
}

func verb(kind string, many bool) string {
	s := map[string]string{Cancel: "cancelada", Settle: "baixada como paga fora do banco"}[kind]
	if many {
		s = map[string]string{Cancel: "canceladas", Settle: "baixadas como pagas fora do banco"}[kind]
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// newDue is the new due date of row key's charge due on cur.
func newDue(j *Job, key, cur string) string {
	if d, ok := j.NewDates[key]; ok {
		return d
	}
	if j.NewDate != "" {
		return j.NewDate
	}
	t, err := rules.ParseISODate(cur)
	if err != nil {
		return cur
	}
	return rules.FormatISODate(t.AddDate(0, 0, j.Days))
}

func brDate(iso string) string {
	t, err := rules.ParseISODate(iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}

// safeName makes a key usable as a folder name.
func safeName(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' || r == '*' || r == '?' || r == '"' || r == '<' || r == '>' || r == '|' {
			return '_'
		}
		return r
	}, k)
}

// route is the API route an item calls.
func route(it Item) string {
	switch it.Kind {
	case SecondCopy:
		return "GET pdf"
	case Cancel:
		return map[string]string{TargetCarnet: "PUT /v1/carnet/:id/cancel", TargetParcel: "PUT /v1/carnet/:id/parcel/:n/cancel",
			TargetCharge: "PUT /v1/charge/:id/cancel", TargetCobv: "PATCH /v2/cobv/:txid"}[it.Target]
	case Settle:
		return map[string]string{TargetCarnet: "PUT /v1/carnet/:id/settle", TargetParcel: "PUT /v1/carnet/:id/parcel/:n/settle",
			TargetCharge: "PUT /v1/charge/:id/settle"}[it.Target]
	case ChangeDueDate:
		return map[string]string{TargetParcel: "PUT /v1/carnet/:id/parcel/:n", TargetParcels: "PUT /v1/carnet/:id/parcels",
			TargetCharge: "PUT /v1/charge/:id/billet", TargetCobv: "PATCH /v2/cobv/:txid"}[it.Target]
	case Abatimento:
		return map[string]string{TargetCobv: "PATCH /v2/cobv/:txid"}[it.Target]
	case Resend:
		return map[string]string{TargetCarnet: "POST /v1/carnet/:id/resend", TargetParcel: "POST /v1/carnet/:id/parcel/:n/resend",
			TargetCharge: "POST /v1/charge/:id/billet/resend"}[it.Target]
	}
	return ""
}

// payerEmails reads each row's payer e-mail from the source run's journal
// (the requests it sent).
func payerEmails(ctx context.Context, dir string) map[int]string {
	out := map[int]string{}
	for _, r := range sentRequests(ctx, dir) {
		var v any
		if json.Unmarshal(r.Req, &v) == nil {
			if e := findEmail(v); e != "" {
				out[r.Index] = e
			}
		}
	}
	return out
}

func findEmail(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["email"].(string); ok && s != "" {
			return s
		}
		for _, y := range x {
			if e := findEmail(y); e != "" {
				return e
			}
		}
	case []any:
		for _, y := range x {
			if e := findEmail(y); e != "" {
				return e
			}
		}
	}
	return ""
}

// WriteText prints the plan for people.
func (p *Plan) WriteText(w io.Writer) {
	fmt.Fprintf(w, "Ação %s (%s) sobre a execução %s\n", p.Name, p.Kind, p.SourceRunID)
	if p.ClockNote != "" {
		fmt.Fprintln(w, p.ClockNote)
	}
	for _, it := range p.Items {
		fmt.Fprintf(w, "  %s\n", it.Text)
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintf(w, "Não se aplica (%d):\n", len(p.Skipped))
		for _, s := range p.Skipped {
			fmt.Fprintf(w, "  %s de %s: %s\n", s.What, s.RowKey, s.Reason)
		}
	}
	if len(p.UnknownKeys) > 0 {
		fmt.Fprintf(w, "Chaves que não estão na execução (%d): %s\n", len(p.UnknownKeys), strings.Join(p.UnknownKeys, ", "))
	}
	fmt.Fprintf(w, "Total: %s, %s, %s, %s\n", plural(len(p.Items), "chamada", "chamadas"), plural(p.Rows, "linha", "linhas"),
		plural(p.Charges, "cobrança", "cobranças"), rules.FormatBRL(p.Cents))
	for r, n := range p.Calls {
		fmt.Fprintf(w, "  %s: %d\n", r, n)
	}
}
