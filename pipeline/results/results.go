// Package results is the model of a run's outcome: what the pipeline writes
// to results.json in the run directory and what the report writers read.
//
// Money is always integer cents; dates are "YYYY-MM-DD" strings; timestamps
// are RFC 3339. The file is versioned by Results.Version.
package results

import (
	"fmt"
	"os"
)

// FileVersion is the current version of the results.json layout.
const FileVersion = 1

// Outcome is what happened to one input row.
type Outcome string

// Row outcomes. Every input row ends in exactly one of them.
const (
	Issued    Outcome = "issued"    // the service created what the row asked for
	Refused   Outcome = "refused"   // refused by validation; nothing was sent
	Denied    Outcome = "denied"    // sent, and the service refused it (e.g. a NEGADA batch item)
	Ambiguous Outcome = "ambiguous" // sent, and whether it exists cannot be known yet
	Pending   Outcome = "pending"   // not sent yet (a run stopped before its end; resume goes on)
)

// Kind is what a job issues.
type Kind string

// Kinds of issuance.
const (
	Carnets Kind = "carnets" // POST /v1/carnet, one per row
	Cobv    Kind = "cobv"    // due-date Pix charges through PUT /v2/lotecobv/:id
	Boletos Kind = "boletos" // POST /v1/charge/one-step with banking_billet, one per row
)

// Results is the whole content of results.json.
type Results struct {
	Version int     `json:"version"`
	Run     RunInfo `json:"run"`
	Rows    []Row   `json:"rows"` // in input order
	Totals  Totals  `json:"totals"`
}

// RunInfo identifies a run.
type RunInfo struct {
	ID             string `json:"id"`
	JobName        string `json:"job_name"`
	JobFile        string `json:"job_file"`
	JobSHA256      string `json:"job_sha256"`
	InputFile      string `json:"input_file"`
	InputSHA256    string `json:"input_sha256"`
	Kind           Kind   `json:"kind"`
	Service        string `json:"service"` // embedded, sandbox or production
	BaseURL        string `json:"base_url,omitempty"`
	PixBaseURL     string `json:"pix_base_url,omitempty"`
	Account        string `json:"account,omitempty"` // payee_code of the issuing account
	Operator       string `json:"operator,omitempty"`
	StartedAt      string `json:"started_at"`
	FinishedAt     string `json:"finished_at,omitempty"`
	RemessaVersion string `json:"remessa_version"`
	Complete       bool   `json:"complete"` // false while rows are pending
}

// Row is the outcome of one input row.
type Row struct {
	Index     int     `json:"index"`      // 0-based position among the input's data rows
	SourceRow int     `json:"source_row"` // row number as the spreadsheet shows it (header is row 1)
	Key       string  `json:"key"`
	PayerName string  `json:"payer_name"`
	PayerDoc  string  `json:"payer_document"` // CPF or CNPJ, digits (or alphanumerics) only
	Outcome   Outcome `json:"outcome"`
	// AmountCents is the total the row asks for: all parcels of a carnet,
	// the value of a slip or of a cobv.
	AmountCents int64  `json:"amount_cents"`
	DueDate     string `json:"due_date,omitempty"` // first (or only) due date

	CustomID  string  `json:"custom_id,omitempty"`
	CarnetID  int64   `json:"carnet_id,omitempty"`
	ChargeIDs []int64 `json:"charge_ids,omitempty"`
	Txid      string  `json:"txid,omitempty"`
	BatchID   string  `json:"batch_id,omitempty"`

	Link          string `json:"link,omitempty"`       // payer-facing page (slip link, carnet link)
	PDF           string `json:"pdf,omitempty"`        // slip or carnet PDF
	Cover         string `json:"cover,omitempty"`      // carnet cover
	TypedLine     string `json:"typed_line,omitempty"` // boleto linha digitável (slips)
	Barcode       string `json:"barcode,omitempty"`    // 44 digits (slips)
	PixCopiaECola string `json:"pix_copia_e_cola,omitempty"`
	Location      string `json:"location,omitempty"` // Pix payload location (cobv)

	Parcels []Parcel `json:"parcels,omitempty"` // carnets only
	Split   []Share  `json:"split,omitempty"`   // the row's split shares, all due dates together

	Problems []Problem `json:"problems,omitempty"`
}

// Parcel is one parcel of an issued carnet.
type Parcel struct {
	Number        int     `json:"number"` // 1-based
	ChargeID      int64   `json:"charge_id"`
	DueDate       string  `json:"due_date"`
	ValueCents    int64   `json:"value_cents"`
	Status        string  `json:"status,omitempty"`
	TypedLine     string  `json:"typed_line,omitempty"`
	Barcode       string  `json:"barcode,omitempty"`
	PixCopiaECola string  `json:"pix_copia_e_cola,omitempty"`
	Link          string  `json:"link,omitempty"`
	PDF           string  `json:"pdf,omitempty"`
	Split         []Share `json:"split,omitempty"`
}

// Share is the part of an amount that goes to one recipient of a split.
// Recipient is a payee_code (charges API) or a Pix account ("conta", Pix API);
// the issuing account's own remainder has Own set.
type Share struct {
	Recipient   string `json:"recipient"`
	Own         bool   `json:"own,omitempty"`
	DueMonth    string `json:"due_month,omitempty"` // "YYYY-MM"
	AmountCents int64  `json:"amount_cents"`
}

// Problem is one reason a row was refused, denied or left ambiguous.
type Problem struct {
	Code      string `json:"code"`                 // stable code, e.g. "cpf_invalido" or the service's code "3500034"
	Field     string `json:"field,omitempty"`      // job field, e.g. "payer.cpf"
	Column    string `json:"column,omitempty"`     // spreadsheet column letter, e.g. "C"
	Header    string `json:"header,omitempty"`     // header text of that column
	Value     string `json:"value,omitempty"`      // offending value (never a secret; CPFs as typed)
	Message   string `json:"message"`              // Portuguese
	MessageEN string `json:"message_en,omitempty"` // English
	Action    string `json:"action,omitempty"`     // what to do about it, Portuguese
	ActionEN  string `json:"action_en,omitempty"`
}

// Count and amount per outcome.
type Tally struct {
	Rows        int   `json:"rows"`
	AmountCents int64 `json:"amount_cents"`
}

// Totals reconcile: In = Issued + Refused + Denied + Ambiguous + Pending,
// for rows and for amounts.
type Totals struct {
	In        Tally `json:"in"`
	Issued    Tally `json:"issued"`
	Refused   Tally `json:"refused"`
	Denied    Tally `json:"denied"`
	Ambiguous Tally `json:"ambiguous"`
	Pending   Tally `json:"pending"`
	// IssuedByDueMonth maps "YYYY-MM" to the issued amount due that month
	// (a carnet contributes each parcel to its own month).
	IssuedByDueMonth map[string]int64 `json:"issued_by_due_month"`
	// SplitByRecipient maps recipient, then "YYYY-MM", to the issued amount
	// that goes to that recipient that month.
	SplitByRecipient map[string]map[string]int64 `json:"split_by_recipient,omitempty"`
}

// Compute recomputes r.Totals from r.Rows.
func (r *Results) Compute() {
	t := NewTotals()
	for i := range r.Rows {
		t.Add(&r.Rows[i])
	}
	r.Totals = t
}

// NewTotals is the totals of no rows (Add accumulates them row by row:
// a run streams its rows into results.json without holding them).
func NewTotals() Totals { return Totals{IssuedByDueMonth: map[string]int64{}} }

// Add counts one row into the totals.
func (t *Totals) Add(row *Row) {
	if t.IssuedByDueMonth == nil {
		t.IssuedByDueMonth = map[string]int64{}
	}
	t.In.add(row.AmountCents)
	switch row.Outcome {
	case Issued:
		t.Issued.add(row.AmountCents)
		if len(row.Parcels) > 0 {
			for _, p := range row.Parcels {
				t.IssuedByDueMonth[month(p.DueDate)] += p.ValueCents
			}
		} else if row.DueDate != "" {
			t.IssuedByDueMonth[month(row.DueDate)] += row.AmountCents
		}
		for _, s := range row.Split {
			if t.SplitByRecipient == nil {
				t.SplitByRecipient = map[string]map[string]int64{}
			}
			m := t.SplitByRecipient[s.Recipient]
			if m == nil {
				m = map[string]int64{}
				t.SplitByRecipient[s.Recipient] = m
			}
			m[s.DueMonth] += s.AmountCents
		}
	case Refused:
		t.Refused.add(row.AmountCents)
	case Denied:
		t.Denied.add(row.AmountCents)
	case Ambiguous:
		t.Ambiguous.add(row.AmountCents)
	default:
		t.Pending.add(row.AmountCents)
	}
}

// Reconciles reports whether the totals close: rows and cents in equal the
// sum over outcomes. It returns a description of the difference when not.
func (t Totals) Reconciles() (bool, string) {
	rows := t.Issued.Rows + t.Refused.Rows + t.Denied.Rows + t.Ambiguous.Rows + t.Pending.Rows
	cents := t.Issued.AmountCents + t.Refused.AmountCents + t.Denied.AmountCents + t.Ambiguous.AmountCents + t.Pending.AmountCents
	if rows != t.In.Rows || cents != t.In.AmountCents {
		return false, fmt.Sprintf("rows in %d vs %d accounted; cents in %d vs %d accounted", t.In.Rows, rows, t.In.AmountCents, cents)
	}
	return true, ""
}

func (t *Tally) add(cents int64) { t.Rows++; t.AmountCents += cents }

func month(date string) string {
	if len(date) >= 7 {
		return date[:7]
	}
	return date
}

// Load reads a results.json file.
func Load(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := Decode(b, &r); err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	if r.Version != FileVersion {
		return nil, fmt.Errorf("results: %s: version %d, want %d", path, r.Version, FileVersion)
	}
	return &r, nil
}
