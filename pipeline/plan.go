package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"remessa/pipeline/results"
	"remessa/rules"
)

// Routes the pipeline calls.
const (
	RouteCarnet       = "POST /v1/carnet"
	RouteOneStep      = "POST /v1/charge/one-step"
	RouteLotePut      = "PUT /v2/lotecobv/:id"
	RouteLoteGet      = "GET /v2/lotecobv/:id"
	RouteCobvList     = "GET /v2/cobv"
	RouteSplitConfig  = "PUT /v2/gn/split/config/:id"
	RouteSplitVinculo = "PUT /v2/gn/split/cobv/:txid/vinculo/:splitConfigId"
)

// Plan is what a run would do, computed without sending anything.
type Plan struct {
	Job      string       `json:"job"`
	Name     string       `json:"name"`
	Kind     results.Kind `json:"kind"`
	Service  string       `json:"service"`
	Rows     int          `json:"rows"`
	Accepted int          `json:"accepted"`
	Refused  int          `json:"refused"`
	Warnings int          `json:"warnings"`
	// OnInvalid says what a run does with refused rows (stop or skip).
	OnInvalid string      `json:"on_invalid"`
	Issue     PlanIssue   `json:"issue"`
	Totals    PlanTotals  `json:"totals"`
	Calls     []RouteCall `json:"calls"`
	// Days is how many days the run needs under the daily quotas.
	Days int `json:"days"`
	// Earlier says what the runs folder knows of this job: the same job on
	// the same input already ran (a run is refused without --again), or
	// rows repeat an earlier run's key and due date. Filled by the run
	// package, which keeps that folder.
	Earlier []string `json:"earlier,omitempty"`
	// Movements is a CNAB remessa's plan of movements other than entries
	// (pipeline/movements.Plan), for `remessa plan --format json`.
	Movements json.RawMessage `json:"movements,omitempty"`
	// MovementsText is that plan as a person reads it (what `remessa plan`
	// prints), for the question a production run asks before it sends
	// anything: "" when the file has no movements.
	MovementsText string `json:"-"`
	// JobWarnings are warnings about the job file itself (Job.JobWarnings).
	JobWarnings []JobProblem `json:"job_warnings,omitempty"`
	// DiscountWindows says which carnet parcels get which conditional
	// discount window (at most 12 distinct; MoreDiscountWindows counts the
	// carnets of the others).
	DiscountWindows     []DiscountWindow `json:"discount_windows,omitempty"`
	MoreDiscountWindows int              `json:"more_discount_windows,omitempty"`
}

// PlanIssue counts what will be issued.
type PlanIssue struct {
	Carnets      int         `json:"carnets,omitempty"`
	Parcels      int         `json:"parcels,omitempty"`
	Slips        int         `json:"slips,omitempty"`
	Charges      int         `json:"charges"` // charges created: parcels, slips or cobv
	Batches      []BatchPlan `json:"batches,omitempty"`
	SplitConfigs int         `json:"split_configs,omitempty"`
}

// BatchPlan is one cobv batch: a run of consecutive accepted items.
type BatchPlan struct {
	Number int `json:"number"` // 1-based
	First  int `json:"first"`  // index into the accepted items
	Items  int `json:"items"`
	Bytes  int `json:"bytes"` // request body size (txids at their longest when derived)
	// FirstRow and LastRow are the spreadsheet rows of the batch's first and last items.
	FirstRow int `json:"first_row"`
	LastRow  int `json:"last_row"`
	// CentsTotal is the batch's total value.
	Cents int64 `json:"amount_cents"`
}

// PlanTotals are the amounts involved, in cents.
type PlanTotals struct {
	AcceptedCents int64 `json:"accepted_cents"`
	RefusedCents  int64 `json:"refused_cents"`
	// ByDueMonth maps "YYYY-MM" to the amount due that month (a carnet
	// contributes each parcel to its own month).
	ByDueMonth map[string]int64 `json:"by_due_month"`
	// BySplitRecipient maps a recipient (payee_code or Pix conta; "own"
	// for the issuing account) to "YYYY-MM" to its share.
	BySplitRecipient map[string]map[string]int64 `json:"by_split_recipient,omitempty"`
}

// RouteCall is how many requests a route needs and how many days the
// daily quota makes that.
type RouteCall struct {
	Route string `json:"route"`
	Calls int    `json:"calls"`
	// Minimum is true when the count is a lower bound (status polling).
	Minimum bool `json:"minimum,omitempty"`
	Quota   int  `json:"quota_per_day"`
	Days    int  `json:"days"`
}

// OwnRecipient is the key of the issuing account in BySplitRecipient.
const OwnRecipient = "own"

// PlanBuilder accumulates a plan from items as they stream, keeping only
// counts, totals and batch boundaries.
type PlanBuilder struct {
	job      *Job
	p        *Plan
	size     int
	maxBytes int
	overhead int
	cur      *BatchPlan
	splits   map[string]bool
	n        int
}

// NewPlanBuilder starts a plan for job.
func NewPlanBuilder(job *Job) *PlanBuilder {
	b := &PlanBuilder{job: job, splits: map[string]bool{}, p: &Plan{Name: job.Name, Kind: job.Kind, Service: job.Service, OnInvalid: job.OnInvalid,
		Totals: PlanTotals{ByDueMonth: map[string]int64{}}}}
	if job.Kind == results.Cobv {
		b.size, b.maxBytes = rules.MaxBatchItems, DefaultBatchMaxBytes
		desc := DefaultCobvBatchLabel
		if bs := job.Spec.Issue.Cobv.Batch; bs != nil {
			if bs.Size > 0 {
				b.size = bs.Size
			}
			if bs.MaxBytes > 0 {
				b.maxBytes = bs.MaxBytes
			}
			if bs.Descricao != "" {
				desc = bs.Descricao
			}
		}
		hdr, _ := json.Marshal(struct {
			Descricao string `json:"descricao"`
			Cobsv     []int  `json:"cobsv"`
		}{desc, []int{}})
		b.overhead = len(hdr)
	}
	return b
}

// jsonSizer counts what a json.Encoder writes, without keeping it: the
// size of json.Marshal's output without building it.
type jsonSizer struct {
	n   int
	enc *json.Encoder
}

func (s *jsonSizer) Write(p []byte) (int, error) { s.n += len(p); return len(p), nil }

var sizers = sync.Pool{New: func() any {
	s := &jsonSizer{}
	s.enc = json.NewEncoder(s)
	return s
}}

// CobvBytes is the size of a cobv creation request inside a batch body,
// counting a derived txid at its longest (35 characters).
func CobvBytes(c *CobvRequest) int {
	n, ok := cobvSize(c)
	if !ok {
		e := sizers.Get().(*jsonSizer)
		e.n = 0
		e.enc.Encode(c)
		n = e.n - 1 // Encode ends with a newline Marshal does not write
		sizers.Put(e)
	}
	if c.Txid == "" {
		n += len(`,"txid":""`) + 35
	}
	return n
}

// Add counts one accepted item.
func (b *PlanBuilder) Add(it *Item) {
	p := b.p
	p.Accepted++
	p.Totals.AcceptedCents += it.AmountCents
	switch {
	case it.Carnet != nil:
		p.Issue.Carnets++
		p.Issue.Parcels += len(it.Parcels)
		p.Issue.Charges += len(it.Parcels)
		for _, pp := range it.Parcels {
			p.Totals.ByDueMonth[pp.DueDate.Format("2006-01")] += pp.ValueCents
		}
		b.addDiscountWindow(it.Carnet)
	case it.Slip != nil:
		p.Issue.Slips++
		p.Issue.Charges++
		p.Totals.ByDueMonth[it.DueDate.Format("2006-01")] += it.AmountCents
	case it.Cobv != nil:
		p.Issue.Charges++
		p.Totals.ByDueMonth[it.DueDate.Format("2006-01")] += it.AmountCents
		size := CobvBytes(it.Cobv) + 1 // comma
		if b.cur == nil || b.cur.Items >= b.size || b.cur.Bytes+size > b.maxBytes {
			if b.cur != nil {
				b.cur.Bytes-- // no comma after the last item
			}
			p.Issue.Batches = append(p.Issue.Batches, BatchPlan{Number: len(p.Issue.Batches) + 1, First: b.n, FirstRow: it.SourceRow, Bytes: b.overhead})
			b.cur = &p.Issue.Batches[len(p.Issue.Batches)-1]
		}
		b.cur.Items++
		b.cur.Bytes += size
		b.cur.LastRow = it.SourceRow
		b.cur.Cents += it.AmountCents
		if it.SplitKey != "" && !b.splits[it.SplitKey] {
			b.splits[it.SplitKey] = true
			p.Issue.SplitConfigs++
		}
	}
	for _, s := range it.Split {
		if p.Totals.BySplitRecipient == nil {
			p.Totals.BySplitRecipient = map[string]map[string]int64{}
		}
		r := s.Recipient
		if s.Own {
			r = OwnRecipient
		}
		m := p.Totals.BySplitRecipient[r]
		if m == nil {
			m = map[string]int64{}
			p.Totals.BySplitRecipient[r] = m
		}
		m[s.DueMonth] += s.AmountCents
	}
	b.n++
}

// Done finishes the plan with the validation summary.
func (b *PlanBuilder) Done(jobPath string, s *Summary) *Plan {
	p := b.p
	p.Job = jobPath
	p.Rows, p.Refused, p.Warnings = s.Rows, s.Refused, s.Warnings
	p.JobWarnings = b.job.JobWarnings(jobPath)
	p.Warnings += len(p.JobWarnings)
	sortDiscountWindows(p.DiscountWindows)
	p.Totals.RefusedCents = s.RefusedCents
	if b.cur != nil {
		// the last batch's trailing comma was counted
		b.cur.Bytes--
	}
	add := func(route string, calls int, min bool) {
		if calls == 0 {
			return
		}
		q := b.job.quota(route)
		p.Calls = append(p.Calls, RouteCall{Route: route, Calls: calls, Minimum: min, Quota: q, Days: (calls + q - 1) / q})
	}
	switch b.job.Kind {
	case results.Carnets:
		add(RouteCarnet, p.Issue.Carnets, false)
	case results.Boletos:
		add(RouteOneStep, p.Issue.Slips, false)
	case results.Cobv:
		nb := len(p.Issue.Batches)
		add(RouteLotePut, nb, false)
		add(RouteLoteGet, nb, true)
		pages := 0
		for _, bt := range p.Issue.Batches {
			pages += (bt.Items + rules.MaxPageSize - 1) / rules.MaxPageSize
		}
		add(RouteCobvList, pages, false)
		if p.Issue.SplitConfigs > 0 {
			add(RouteSplitConfig, p.Issue.SplitConfigs, false)
			add(RouteSplitVinculo, p.Issue.Charges, false)
		}
	}
	for _, c := range p.Calls {
		if c.Days > p.Days {
			p.Days = c.Days
		}
	}
	if p.Days == 0 && p.Accepted > 0 {
		p.Days = 1
	}
	if p.Calls == nil {
		p.Calls = []RouteCall{}
	}
	return p
}

// quota returns the daily quota of a route.
func (j *Job) quota(route string) int {
	if q, ok := j.Quota[route]; ok && q > 0 {
		return q
	}
	if q, ok := j.Quota["default"]; ok && q > 0 {
		return q
	}
	return rules.DailyQuotaPerRoute
}

// BuildPlan computes the plan of a validated job.
func BuildPlan(jobPath string, job *Job, v *Validation) *Plan {
	b := NewPlanBuilder(job)
	for i := range v.Items {
		b.Add(&v.Items[i])
	}
	return b.Done(jobPath, &v.Summary)
}

// StreamPlan validates and plans in one streaming pass, without keeping
// the items: what plan needs for inputs of any size.
func StreamPlan(ctx context.Context, jobPath string, job *Job) (*Plan, *Summary, error) {
	b := NewPlanBuilder(job)
	s, err := ValidateStream(ctx, job, Handler{Item: func(it *Item) error { b.Add(it); return nil }})
	if err != nil {
		return nil, nil, err
	}
	return b.Done(jobPath, s), s, nil
}

// Batches splits accepted cobv items into batches the same way the plan
// does: at most size items and maxBytes of body each (0 = defaults).
// It returns the [first, end) index ranges.
func Batches(job *Job, items []Item) [][2]int {
	b := NewPlanBuilder(job)
	for i := range items {
		b.Add(&items[i])
	}
	out := make([][2]int, len(b.p.Issue.Batches))
	for i, bt := range b.p.Issue.Batches {
		out[i] = [2]int{bt.First, bt.First + bt.Items}
	}
	return out
}

// WriteJSON writes the plan as indented JSON.
func (p *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

// WriteText writes the plan for people.
func (p *Plan) WriteText(w io.Writer, lang string) error {
	en := lang == "en"
	t := func(pt, e string) string {
		if en {
			return e
		}
		return pt
	}
	brl := rules.FormatBRL
	fmt.Fprintf(w, t("Plano de %s (%s) — serviço %s\n", "Plan of %s (%s) — service %s\n"), p.Name, p.Job, ServiceName(p.Service, lang))
	fmt.Fprintf(w, t("Linhas: %d lidas, %d aceitas, %d recusadas, %d avisos\n", "Rows: %d read, %d accepted, %d refused, %d warnings\n"), p.Rows, p.Accepted, p.Refused, p.Warnings)
	for _, e := range p.Earlier {
		fmt.Fprintf(w, "  %s\n", e)
	}
	for _, jw := range p.JobWarnings {
		fmt.Fprintf(w, "  %s %s\n", t("AVISO", "WARN "), jw.Localized(lang))
	}
	if p.Refused > 0 {
		if p.OnInvalid == "skip" {
			fmt.Fprintln(w, t("  on_invalid: skip — as linhas recusadas serão relatadas e não emitidas", "  on_invalid: skip — refused rows will be reported and not issued"))
		} else {
			fmt.Fprintln(w, t("  on_invalid: stop — a execução não começa enquanto houver linhas recusadas (veja remessa validate)", "  on_invalid: stop — the run will not start while rows are refused (see remessa validate)"))
		}
	}
	fmt.Fprintln(w, t("Emissão:", "Issue:"))
	switch p.Kind {
	case results.Carnets:
		fmt.Fprintf(w, t("  %d carnês com %d parcelas no total\n", "  %d carnets with %d parcels in all\n"), p.Issue.Carnets, p.Issue.Parcels)
		if len(p.DiscountWindows) > 0 {
			fmt.Fprintln(w, t("  Desconto condicional:", "  Conditional discount:"))
			for _, dw := range p.DiscountWindows {
				fmt.Fprintf(w, "    %s\n", dw.Text(lang))
			}
			if p.MoreDiscountWindows > 0 {
				fmt.Fprintf(w, t("    e mais %s com outras datas\n", "    and %s with other dates\n"),
					plural(p.MoreDiscountWindows, t("carnê", "carnet"), t("carnês", "carnets")))
			}
		}
	case results.Boletos:
		fmt.Fprintf(w, t("  %d boletos\n", "  %d slips\n"), p.Issue.Slips)
	case results.Cobv:
		fmt.Fprintf(w, t("  %d cobranças Pix com vencimento em %s\n", "  %d due-date Pix charges in %s\n"), p.Issue.Charges,
			plural(len(p.Issue.Batches), t("lote", "batch"), t("lotes", "batches")))
		for _, b := range p.Issue.Batches {
			fmt.Fprintf(w, t("    lote %d: %d cobranças (linhas %d a %d), %s, corpo de %s\n", "    batch %d: %d charges (rows %d to %d), %s, body of %s\n"),
				b.Number, b.Items, b.FirstRow, b.LastRow, brl(b.Cents), sizeText(b.Bytes))
		}
		if p.Issue.SplitConfigs > 0 {
			fmt.Fprintf(w, "  %s\n", plural(p.Issue.SplitConfigs, t("configuração de split Pix", "Pix split configuration"), t("configurações de split Pix", "Pix split configurations")))
		}
	}
	fmt.Fprintf(w, t("Total aceito: %s; recusado: %s\n", "Accepted total: %s; refused: %s\n"), brl(p.Totals.AcceptedCents), brl(p.Totals.RefusedCents))
	fmt.Fprintln(w, t("Por mês de vencimento:", "By due month:"))
	for _, m := range sortedKeys(p.Totals.ByDueMonth) {
		fmt.Fprintf(w, "  %s  %16s\n", m, brl(p.Totals.ByDueMonth[m]))
	}
	if len(p.Totals.BySplitRecipient) > 0 {
		fmt.Fprintln(w, t("Por recebedor do split:", "By split recipient:"))
		recips := make([]string, 0, len(p.Totals.BySplitRecipient))
		for r := range p.Totals.BySplitRecipient {
			recips = append(recips, r)
		}
		sort.Slice(recips, func(a, b int) bool {
			if (recips[a] == OwnRecipient) != (recips[b] == OwnRecipient) {
				return recips[a] == OwnRecipient
			}
			return recips[a] < recips[b]
		})
		for _, r := range recips {
			var tot int64
			for _, v := range p.Totals.BySplitRecipient[r] {
				tot += v
			}
			label := r
			if r == OwnRecipient {
				label = t("conta emissora", "issuing account")
			}
			fmt.Fprintf(w, "  %-34s %16s\n", label, brl(tot))
		}
	}
	fmt.Fprintln(w, t("Chamadas à API (cota diária por rota):", "API calls (daily quota per route):"))
	for _, c := range p.Calls {
		min := ""
		if c.Minimum {
			min = t(" (no mínimo)", " (at least)")
		}
		fmt.Fprintf(w, t("  %-55s %7d%s — cota %d/dia, %s\n", "  %-55s %7d%s — quota %d/day, %s\n"), c.Route, c.Calls, min, c.Quota, plural(c.Days, t("dia", "day"), t("dias", "days")))
	}
	fmt.Fprintf(w, t("Dias necessários: %d\n", "Days needed: %d\n"), p.Days)
	return nil
}

func sizeText(n int) string {
	if n >= 1024 {
		return strings.Replace(fmt.Sprintf("%.1f KB", float64(n)/1024), ".", ",", 1)
	}
	return fmt.Sprintf("%d B", n)
}

func sortedKeys(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
