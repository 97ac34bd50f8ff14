// Package movements carries out the titles of a CNAB remessa that are not
// entries (movement 01): 02 pedido de baixa cancels the title's charge, 06
// alteração de vencimento moves its due date, each as an action job of
// pipeline/actions on the run that issued the title (found by its key in
// the runs index, run.Index.RunsIssuing); 04/05 concessão/cancelamento
// de abatimento set or remove a cobv's abatimento (the abatimento action)
// and are refused with the reason on slips and carnets, which have none in
// the service; 31 alteração de outros dados is refused with the reason. Nothing is dropped: every movement title is in a
// group of the plan or among its refusals, and its outcome is written to
// movimentos.json in the folder of the run that read the file.
//
// The CLI's run, plan and resume and the desk call the same functions:
// Scan (the plan), Run (issue the entries, then the movements), Execute
// and Resume. docs/cnab.md has the table of movements.
package movements

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"remessa/formats"
	"remessa/pipeline"
	"remessa/pipeline/actions"
	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/reports"
	"remessa/rules"
)

// Title is one movement title of the file.
type Title struct {
	Line   int    `json:"line"`   // the title's first line
	Column string `json:"column"` // the movement code's positions (formats.PositionColumn)
	Code   string `json:"code"`   // "02", "06"…
	Key    string `json:"key"`    // seu número (or uso da empresa)
	Due    string `json:"due,omitempty"`
	Cents  int64  `json:"amount_cents"`
	Rebate int64  `json:"rebate_cents,omitempty"`
}

// Where is the title's movement positions, as messages say them.
func (t *Title) Where(lang string) string {
	return formats.Place(lang, t.Line, t.Column, "")
}

// Group is the titles of one movement code that one run issued: one action
// job.
type Group struct {
	Code   string  `json:"code"`
	Name   string  `json:"name"`
	Kind   string  `json:"kind"` // actions.Cancel, actions.ChangeDueDate, actions.Abatimento
	RunID  string  `json:"run_id"`
	RunDir string  `json:"run_dir"`
	Titles []Title `json:"titles"`
}

// Refusal is a movement title that is not carried out, and why.
type Refusal struct {
	Title
	Reason   string `json:"reason"`
	ReasonEN string `json:"reason_en"`
}

// Plan is what the movements of a file will do.
type Plan struct {
	File    string    `json:"file"`
	Service string    `json:"service"`
	Titles  int       `json:"titles"` // movement titles read (every one is in Groups or Refused)
	Groups  []Group   `json:"groups"`
	Refused []Refusal `json:"refused,omitempty"`
}

// IsCNAB says whether the job reads a CNAB remessa.
func IsCNAB(job *pipeline.Job) bool { return job.InputFormat != "" }

// Scan reads the movement titles of the job's CNAB input and plans them:
// each title's run found by its key among the runs of runsDir (default the
// job's reports.dir) on the job's service. A file with no movements gives
// an empty plan; a file the reader refuses gives its error (the issuance
// reports the same). Titles with a problem of their own are left to the
// issuance, which refuses them at their positions.
func Scan(ctx context.Context, job *pipeline.Job, runsDir, service string) (*Plan, error) {
	if service == "" {
		service = job.Service
	}
	if service == "" {
		service = "embedded"
	}
	p := &Plan{File: job.InputFile, Service: service}
	if !IsCNAB(job) {
		return p, nil
	}
	if runsDir == "" {
		runsDir = job.Reports.Dir
	}
	o := job.InputOptions()
	o.CNABMovements = true
	r, err := formats.Open(job.InputFile, o)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var titles []Title
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if formats.IsRowLevel(err) {
				continue // refused by the issuance at its positions
			}
			return nil, err
		}
		mov := formats.CNABCell(row, formats.CNABMovement)
		t := Title{Line: row.Number, Column: mov.Column, Code: mov.Value,
			Key:   formats.CNABCell(row, formats.CNABKey).Value,
			Due:   formats.CNABCell(row, formats.CNABDue).Value,
			Cents: cents(formats.CNABCell(row, formats.CNABValue).Value), Rebate: cents(formats.CNABCell(row, formats.CNABRebate).Value)}
		titles = append(titles, t)
	}
	p.Titles = len(titles)
	if len(titles) == 0 {
		return p, nil
	}
	keys := make([]string, 0, len(titles))
	for _, t := range titles {
		keys = append(keys, t.Key)
	}
	idx := &run.Index{Path: filepath.Join(runsDir, run.IndexFile)}
	found, err := idx.RunsIssuing(ctx, service, keys)
	if err != nil {
		return nil, err
	}
	kinds := map[string]results.Kind{}
	groups := map[string]*Group{}
	var order []string
	for _, t := range titles {
		refuse := func(pt, en string) {
			p.Refused = append(p.Refused, Refusal{Title: t, Reason: pt, ReasonEN: en})
		}
		if t.Key == "" {
			refuse("o título não tem seu número nem uso da empresa: não há como achar a cobrança", "the title has no seu número nor uso da empresa: its charge cannot be found")
			continue
		}
		runs := found[t.Key]
		switch len(runs) {
		case 0:
			refuse(fmt.Sprintf("nenhuma execução desta pasta emitiu o título %s no serviço %s: não há cobrança a alterar", t.Key, service),
				fmt.Sprintf("no run of this folder issued title %s on service %s: there is no charge to change", t.Key, service))
			continue
		case 1:
		default:
			var ids []string
			for _, e := range runs {
				ids = append(ids, e.RunID)
			}
			refuse(fmt.Sprintf("o título %s foi emitido em %d execuções (%s): remessa não escolhe qual alterar; use remessa action na execução certa", t.Key, len(runs), strings.Join(ids, ", ")),
				fmt.Sprintf("title %s was issued by %d runs (%s): remessa does not pick one to change; use remessa action on the right run", t.Key, len(runs), strings.Join(ids, ", ")))
			continue
		}
		src := runs[0]
		kind, ok := kinds[src.Dir]
		if !ok {
			kind = runKind(src.Dir)
			kinds[src.Dir] = kind
		}
		var act string
		switch t.Code {
		case "02":
			act = actions.Cancel
		case "06":
			act = actions.ChangeDueDate
			if t.Due == "" {
				refuse("alteração de vencimento sem data de vencimento válida", "due date change without a valid due date")
				continue
			}
		case "04", "05":
			pt, en := formats.CNABMovementName(t.Code)
			if kind != results.Cobv {
				refuse(fmt.Sprintf("movimento %s (%s): %s", t.Code, pt, rebateReason), fmt.Sprintf("movement %s (%s): %s", t.Code, en, rebateReasonEN))
				continue
			}
			if t.Code == "04" && t.Rebate <= 0 {
				refuse(fmt.Sprintf("movimento 04 (%s) sem valor de abatimento: o título não diz quanto abater", pt),
					fmt.Sprintf("movement 04 (%s) without a rebate value: the title does not say how much", en))
				continue
			}
			act = actions.Abatimento
		case "31":
			refuse("movimento 31 (alteração de outros dados): o arquivo não diz quais dados mudaram e o serviço não altera pagador nem valor de boletos e carnês já emitidos; remessa não reescreve a cobrança às cegas. Cancele (02) e emita de novo (01), ou use remessa action",
				"movement 31 (change of other data): the file does not say which data changed and the service does not change the payer or value of issued slips and carnets; remessa does not rewrite the charge blindly. Cancel (02) and issue again (01), or use remessa action")
			continue
		default:
			refuse("movimento "+t.Code+" não é executado", "movement "+t.Code+" is not carried out")
			continue
		}
		gk := t.Code + "|" + src.Dir
		g := groups[gk]
		if g == nil {
			pt, _ := formats.CNABMovementName(t.Code)
			g = &Group{Code: t.Code, Name: pt, Kind: act, RunID: src.RunID, RunDir: src.Dir}
			groups[gk] = g
			order = append(order, gk)
		}
		if slices.ContainsFunc(g.Titles, func(o Title) bool { return o.Key == t.Key }) {
			refuse(fmt.Sprintf("o título %s aparece de novo com o movimento %s neste arquivo (a primeira vez, na linha %d, vale)", t.Key, t.Code, firstLine(g.Titles, t.Key)),
				fmt.Sprintf("title %s appears again with movement %s in this file (the first, on line %d, stands)", t.Key, t.Code, firstLine(g.Titles, t.Key)))
			continue
		}
		g.Titles = append(g.Titles, t)
	}
	for _, k := range order {
		p.Groups = append(p.Groups, *groups[k])
	}
	return p, nil
}

func firstLine(ts []Title, key string) int {
	for _, t := range ts {
		if t.Key == key {
			return t.Line
		}
	}
	return 0
}

// runKind is what the run in dir issued (from its results.json's header).
func runKind(dir string) results.Kind {
	var k results.Kind
	stop := errors.New("stop")
	_, _ = reports.EachRow(filepath.Join(dir, reports.FileJSON), func(h *results.Results) error { k = h.Run.Kind; return stop },
		func(*results.Row) error { return stop })
	return k
}

// rebateReason says why a rebate movement is not carried out on slips
// and carnets: the service has no abatimento for them (service-spec: the
// charges API changes a slip's due date and metadata, nothing of its
// value).
const (
	rebateReason   = "o serviço não tem abatimento para boletos e carnês (só a cobv Pix tem valor.abatimento); nada foi alterado. Cancele (02) e emita de novo com o valor abatido"
	rebateReasonEN = "the service has no rebate for slips and carnets (only the Pix cobv has valor.abatimento); nothing was changed. Cancel (02) and issue again at the reduced value"
)

// cents reads a numeric cell's value ("1234.56").
func cents(v string) int64 {
	if v == "" {
		return 0
	}
	whole, frac, _ := strings.Cut(v, ".")
	n, err := strconv.ParseInt(whole+(frac + "00")[:2], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// WriteText writes the plan for a person (Portuguese).
func (p *Plan) WriteText(w io.Writer) {
	if p.Titles == 0 {
		return
	}
	fmt.Fprintf(w, "\nMovimentos do arquivo (títulos que não são entradas): %d\n", p.Titles)
	for _, g := range p.Groups {
		fmt.Fprintf(w, "  %s %s: %d título(s) da execução %s\n", g.Code, g.Name, len(g.Titles), g.RunID)
		for i, t := range g.Titles {
			if i == 10 {
				fmt.Fprintf(w, "    … e mais %d\n", len(g.Titles)-10)
				break
			}
			switch g.Kind {
			case actions.ChangeDueDate:
				fmt.Fprintf(w, "    linha %d: %s → novo vencimento %s\n", t.Line, t.Key, brDate(t.Due))
			case actions.Abatimento:
				if g.Code == "05" {
					fmt.Fprintf(w, "    linha %d: %s (%s) → cancelar o abatimento\n", t.Line, t.Key, rules.FormatBRL(t.Cents))
				} else {
					fmt.Fprintf(w, "    linha %d: %s (%s) → abatimento de %s\n", t.Line, t.Key, rules.FormatBRL(t.Cents), rules.FormatBRL(t.Rebate))
				}
			default:
				fmt.Fprintf(w, "    linha %d: %s (%s) → cancelar\n", t.Line, t.Key, rules.FormatBRL(t.Cents))
			}
		}
	}
	if len(p.Refused) > 0 {
		fmt.Fprintf(w, "  Recusados (nada será alterado): %d\n", len(p.Refused))
		for _, r := range p.Refused {
			fmt.Fprintf(w, "    %s, título %s, movimento %s: %s\n", r.Where("pt"), r.Key, r.Code, r.Reason)
		}
	}
}

func brDate(iso string) string {
	t, err := rules.ParseISODate(iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}
