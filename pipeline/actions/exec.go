package actions

import (
	"archive/zip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"remessa/api"
	"remessa/pipeline/journal"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/rules"
)

// Row states of an action's journal (journal rows, one per item).
const (
	StatePending   = "pending"   // not sent
	StateSending   = "sending"   // the call was journaled as intended; outcome not recorded
	StateAmbiguous = "ambiguous" // outcome unknown and the lookup failed: the next resume looks again
	StateDone      = "done"      // applied
	StateSkipped   = "skipped"   // does not apply (already paid, already cancelled, ...): never forced
	StateUncertain = "uncertain" // resend whose outcome is unknown: reported, never sent again
	StateFailed    = "failed"    // the service refused it
)

// MetaFile marks an action folder (and holds its identity).
const MetaFile = "acao.json"

// Options tune an action run.
type Options struct {
	// Run is how the source run's service is reached (Embedded, BaseURL,
	// PixBaseURL, Getenv, Timeout), as for `remessa resume`.
	Run      run.Options
	Now      func() time.Time
	Yes      bool             // production: do not ask
	Confirm  func(*Plan) bool // production: ask
	Progress io.Writer        // plan and summary lines; nil = none
	ID       string           // fixed action id (tests)
	NoSync   bool             // plan on the ledger as it is (tests)
	Backoff  func(n int) time.Duration
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Meta is an action folder's identity.
type Meta struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	JobFile     string `json:"job_file"`
	JobSHA256   string `json:"job_sha256"`
	SourceDir   string `json:"source_dir"`
	SourceRunID string `json:"source_run_id"`
	CopyDir     string `json:"copy_dir,omitempty"`
	Concurrency int    `json:"concurrency"`
	StartedAt   string `json:"started_at"`
}

// Result is what became of one item.
type Result struct {
	State   string               `json:"state"`
	Reason  string               `json:"reason,omitempty"`
	Unknown bool                 `json:"unknown,omitempty"` // an attempt's outcome was unknown
	Obs     []status.Observation `json:"observations,omitempty"`
	Files   []string             `json:"files,omitempty"`
}

// ItemOutcome is one item with its result.
type ItemOutcome struct {
	Item
	Result
}

// Outcome is how an action run ended.
type Outcome struct {
	ID        string        `json:"id"`
	Dir       string        `json:"dir"`
	Plan      *Plan         `json:"plan"`
	Items     []ItemOutcome `json:"items"`
	Done      int           `json:"done"`
	Skipped   int           `json:"skipped"`
	Uncertain int           `json:"uncertain"`
	Failed    int           `json:"failed"`
	Pending   int           `json:"pending"`
	Zip       string        `json:"zip,omitempty"`
}

// ExitCode: 0 everything applied or not applicable, 1 some failed or
// uncertain, 3 some still pending (resume).
func (o *Outcome) ExitCode() int {
	switch {
	case o.Pending > 0:
		return 3
	case o.Failed+o.Uncertain > 0:
		return 1
	}
	return 0
}

// Prepare loads the job, brings the source run's ledger up to date (a
// status sync when the ledger is missing or last synced before now) and
// plans: what `remessa action JOB plan` shows.
func Prepare(ctx context.Context, jobPath string, opts Options) (*Job, *Plan, error) {
	j, err := Load(jobPath, LoadOptions{Now: opts.Now, Getenv: opts.Run.Getenv})
	if err != nil {
		var je interface{ Localized(string) string }
		if errors.As(err, &je) {
			return nil, nil, &run.UsageError{Msg: je.Localized(opts.Run.Lang), Err: err}
		}
		return nil, nil, &run.UsageError{Msg: err.Error(), Err: err}
	}
	if !opts.NoSync {
		if _, err := status.Sync(ctx, j.SourceDir, status.Options{Run: opts.Run, Now: opts.Now}); err != nil {
			return j, nil, fmt.Errorf("ação: atualizar a situação de %s antes de planejar: %w", j.SourceDir, err)
		}
	}
	p, err := BuildPlan(ctx, j)
	return j, p, err
}

// Run plans the action job at jobPath, asks in production, and runs it in
// a new action folder <run>/acoes/<id>/.
func Run(ctx context.Context, jobPath string, opts Options) (*Outcome, error) {
	j, p, err := Prepare(ctx, jobPath, opts)
	if err != nil {
		return nil, err
	}
	m, err := run.ReadMeta(ctx, j.SourceDir)
	if err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		p.WriteText(opts.Progress)
	}
	if m.Service == "production" && !opts.Yes && len(p.Items) > 0 {
		if opts.Confirm == nil || !opts.Confirm(p) {
			return nil, &run.UsageError{Msg: "ação em produção não confirmada; nada foi enviado (use --yes para confirmar sem perguntar)"}
		}
	}
	id := opts.ID
	if id == "" {
		var b [3]byte
		rand.Read(b[:])
		id = opts.now().In(rules.SaoPaulo).Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	}
	dir := filepath.Join(j.SourceDir, "acoes", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(j.File); err == nil {
		os.WriteFile(filepath.Join(dir, "job"+filepath.Ext(j.File)), b, 0o644)
	}
	meta := Meta{ID: id, Name: j.Name, Kind: j.Kind, JobFile: j.File, JobSHA256: j.SHA256, SourceDir: j.SourceDir, SourceRunID: p.SourceRunID,
		CopyDir: j.CopyDir, Concurrency: j.Concurrency, StartedAt: opts.now().UTC().Format(time.RFC3339)}
	jn, err := journal.Create(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	mb, _ := json.Marshal(meta)
	pb, _ := json.Marshal(p)
	err = jn.Tx(ctx, func(tx *journal.Tx) error {
		if err := tx.SetMeta("action", string(mb)); err != nil {
			return err
		}
		if err := tx.SetMeta("plan", string(pb)); err != nil {
			return err
		}
		for i, it := range p.Items {
			ib, _ := json.Marshal(it)
			if err := tx.AddRow(journal.Row{Index: i, Key: it.RowKey, State: StatePending, Info: json.RawMessage(`{}`), Req: ib}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// the marker last: a folder with it has a complete journal
	if err := os.WriteFile(filepath.Join(dir, MetaFile), append(mb, '\n'), 0o644); err != nil {
		return nil, err
	}
	crashAt("acao-seed")
	return execute(ctx, jn, dir, opts)
}

// IsActionDir reports whether dir is an action folder.
func IsActionDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MetaFile))
	return err == nil
}

// Resume continues the action in dir from its journal. Items whose outcome
// is unknown are looked up before anything is sent again; a resend whose
// outcome is unknown is reported uncertain and never sent again.
func Resume(ctx context.Context, dir string, opts Options) (*Outcome, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if !IsActionDir(dir) {
		return nil, &run.UsageError{Msg: fmt.Sprintf("%s não é a pasta de uma ação (sem %s)", dir, MetaFile)}
	}
	jn, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	return execute(ctx, jn, dir, opts)
}

type executor struct {
	jn     *journal.Journal
	dir    string
	meta   Meta
	plan   *Plan
	opts   Options
	cl     *api.Client // lookups (retrying)
	send   *api.Client // actions (one attempt each)
	base   string
	ledger *status.Ledger
	lmu    sync.Mutex
}

func execute(ctx context.Context, jn *journal.Journal, dir string, opts Options) (*Outcome, error) {
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, &run.UsageError{Msg: err.Error(), Err: err}
	}
	defer unlock()
	metas, err := jn.Meta(ctx)
	if err != nil {
		return nil, err
	}
	e := &executor{jn: jn, dir: dir, opts: opts}
	if err := json.Unmarshal([]byte(metas["action"]), &e.meta); err != nil {
		return nil, fmt.Errorf("ação %s: metadados ilegíveis: %w", dir, err)
	}
	e.plan = &Plan{}
	json.Unmarshal([]byte(metas["plan"]), e.plan)
	if _, err := jn.AbandonIntended(ctx); err != nil {
		return nil, err
	}
	rows, err := jn.Rows(ctx)
	if err != nil {
		return nil, err
	}
	var todo []journal.Row
	for _, r := range rows {
		if r.State == StatePending || r.State == StateSending || r.State == StateAmbiguous {
			todo = append(todo, r)
		}
	}
	e.ledger, err = status.OpenLedger(e.meta.SourceDir)
	if err != nil {
		return nil, err
	}
	defer e.ledger.Close()
	if len(todo) > 0 {
		svc, _, err := run.Connect(ctx, e.meta.SourceDir, opts.Run)
		if err != nil {
			return nil, fmt.Errorf("ação: conectar ao serviço: %w", err)
		}
		defer svc.Close()
		e.cl, e.base = svc.Client, svc.BaseURL
		if e.send, err = svc.Client.NoRetry(); err != nil {
			return nil, err
		}
		conc := max(e.meta.Concurrency, 1)
		sem := make(chan struct{}, conc)
		var wg sync.WaitGroup
		var firstErr atomic.Value
		for _, r := range todo {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func(r journal.Row) {
				defer func() { <-sem; wg.Done() }()
				if err := e.process(ctx, r); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}(r)
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil && ctx.Err() == nil {
			// journaled: the next resume goes on from here
			if opts.Progress != nil {
				fmt.Fprintln(opts.Progress, "ação:", err)
			}
		}
	}
	return e.finish(ctx)
}

// decodeRow reads a journal row's item and result.
func decodeRow(r journal.Row) (Item, Result) {
	var it Item
	var res Result
	json.Unmarshal(r.Req, &it)
	if len(r.Res) > 0 {
		json.Unmarshal(r.Res, &res)
	}
	res.State = r.State
	return it, res
}

func (e *executor) setRow(ctx context.Context, idx int, res Result, seq int64, callState string, httpStatus int, errText string) error {
	b, _ := json.Marshal(res)
	return e.jn.Tx(ctx, func(tx *journal.Tx) error {
		if seq > 0 {
			if err := tx.Finish(seq, callState, httpStatus, errText); err != nil {
				return err
			}
		}
		return tx.SetRow(idx, res.State, b)
	})
}

func (e *executor) backoff(n int) time.Duration {
	if e.opts.Backoff != nil {
		return e.opts.Backoff(n)
	}
	return min(50*time.Millisecond<<min(n, 6), 2*time.Second)
}

// maxAttempts bounds the calls one item makes in one process before it is
// left pending for the next resume.
const maxAttempts = 12

func (e *executor) process(ctx context.Context, r journal.Row) error {
	it, res := decodeRow(r)
	if it.Kind == SecondCopy {
		return e.secondCopy(ctx, r.Index, it)
	}
	if res.State == StateSending || res.State == StateAmbiguous {
		// a killed process (or a lost answer) left the outcome unknown:
		// look it up before anything is sent again
		res.Unknown = true
		if it.Kind == Resend {
			res.State, res.Reason = StateUncertain, "incerto: o reenvio pode ter sido feito; não foi enviado de novo"
			return e.setRow(ctx, r.Index, res, 0, "", 0, "")
		}
		done, err := e.settleUnknown(ctx, r.Index, it, &res, 0)
		if done || err != nil {
			return err
		}
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var seq int64
		err := e.jn.Tx(ctx, func(tx *journal.Tx) error {
			if err := tx.SetRowAttempt(r.Index, StateSending); err != nil {
				return err
			}
			var err error
			seq, err = tx.Intend(route(it), target(it))
			return err
		})
		if err != nil {
			return err
		}
		crashAt("acao-intent")
		err = e.call(ctx, it)
		crashAt("acao-sent")
		var ae *api.Error
		switch {
		case err == nil:
			res.State, res.Reason = StateDone, ""
			if it.Kind != Resend {
				if lk, lerr := e.lookup(ctx, it); lerr == nil {
					res.Obs = lk.obs
				} else {
					res.Obs = expected(it)
				}
			}
			crashAt("acao-lookup")
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallOK, 200, ""); err != nil {
				return err
			}
			crashAt("acao-done")
			return e.apply(ctx, res.Obs)
		case errors.As(err, &ae) && (ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable):
			// not processed: again, later
			res.State = StatePending
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallFailed, ae.Status, ae.Error()); err != nil {
				return err
			}
			wait := e.backoff(attempt)
			if ae.RetryAfter > wait && ae.RetryAfter <= 5*time.Second {
				wait = ae.RetryAfter
			}
			time.Sleep(wait)
			continue
		case errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500:
			// refused: was it done already (an earlier attempt whose
			// answer was lost), or does it no longer apply?
			if it.Kind == Resend {
				res.State, res.Reason = StateSkipped, "não se aplica: "+ae.Description
				return e.setRow(ctx, r.Index, res, seq, journal.CallFailed, ae.Status, ae.Error())
			}
			lk, lerr := e.lookup(ctx, it)
			switch {
			case lerr != nil:
				res.State, res.Reason = StateFailed, ae.Error()
			case lk.applied && res.Unknown:
				res.State, res.Reason, res.Obs = StateDone, "", lk.obs
			case lk.applied:
				res.State, res.Reason, res.Obs = StateSkipped, alreadyReason(it.Kind), lk.obs
			case lk.reason != "":
				res.State, res.Reason, res.Obs = StateSkipped, lk.reason, lk.obs
			default:
				res.State, res.Reason = StateFailed, "recusada pelo serviço: "+ae.Error()
			}
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallFailed, ae.Status, ae.Error()); err != nil {
				return err
			}
			return e.apply(ctx, res.Obs)
		default:
			// 500/502/504 or a lost connection: the outcome is unknown
			status := 0
			if ae != nil {
				status = ae.Status
			}
			res.Unknown = true
			if it.Kind == Resend {
				res.State, res.Reason = StateUncertain, "incerto: o reenvio pode ter sido feito; não foi enviado de novo"
				return e.setRow(ctx, r.Index, res, seq, journal.CallUnknown, status, err.Error())
			}
			res.State = StateSending
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallUnknown, status, err.Error()); err != nil {
				return err
			}
			done, err := e.settleUnknown(ctx, r.Index, it, &res, attempt)
			if done || err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("ação: %s de %s ficou pendente depois de %d tentativas; rode resume", it.Kind, it.RowKey, maxAttempts)
}

// settleUnknown looks up an item whose outcome is unknown: applied ⇒
// done; no longer applicable ⇒ skipped; still to do ⇒ pending (the
// caller sends it again); the lookup failed ⇒ ambiguous (the next resume
// looks again). It reports whether the item is settled.
func (e *executor) settleUnknown(ctx context.Context, idx int, it Item, res *Result, attempt int) (bool, error) {
	time.Sleep(e.backoff(attempt))
	lk, err := e.lookup(ctx, it)
	crashAt("acao-lookup")
	switch {
	case err != nil:
		res.State, res.Reason = StateAmbiguous, "incerto: não foi possível verificar ("+err.Error()+"); resume verifica de novo"
		return true, e.setRow(ctx, idx, *res, 0, "", 0, "")
	case lk.applied:
		res.State, res.Reason, res.Obs = StateDone, "", lk.obs
	case lk.reason != "":
		res.State, res.Reason, res.Obs = StateSkipped, lk.reason, lk.obs
	default:
		res.State = StatePending
		return false, e.setRow(ctx, idx, *res, 0, "", 0, "")
	}
	if err := e.setRow(ctx, idx, *res, 0, "", 0, ""); err != nil {
		return true, err
	}
	crashAt("acao-done")
	return true, e.apply(ctx, res.Obs)
}

func alreadyReason(kind string) string {
	switch kind {
	case Cancel:
		return "não se aplica: já cancelada"
	case Settle:
		return "não se aplica: já paga"
	case ChangeDueDate:
		return "não se aplica: já vence na nova data"
	}
	return "não se aplica"
}

func target(it Item) string {
	switch it.Target {
	case TargetCobv:
		return it.Txid
	case TargetCharge:
		return strconv.FormatInt(it.ChargeID, 10)
	case TargetParcel:
		return fmt.Sprintf("%d/%d", it.CarnetID, it.Parcel)
	}
	return strconv.FormatInt(it.CarnetID, 10)
}

// call sends the item's one request.
func (e *executor) call(ctx context.Context, it Item) error {
	c := e.send
	switch it.Kind {
	case Cancel:
		switch it.Target {
		case TargetCarnet:
			return c.CancelCarnet(ctx, it.CarnetID)
		case TargetParcel:
			return c.CancelParcel(ctx, it.CarnetID, it.Parcel)
		case TargetCharge:
			return c.CancelCharge(ctx, it.ChargeID)
		case TargetCobv:
			_, err := c.PatchCobV(ctx, it.Txid, api.CobPatch{Status: "REMOVIDA_PELO_USUARIO_RECEBEDOR"})
			return err
		}
	case Settle:
		switch it.Target {
		case TargetCarnet:
			return c.SettleCarnet(ctx, it.CarnetID)
		case TargetParcel:
			return c.SettleParcel(ctx, it.CarnetID, it.Parcel)
		case TargetCharge:
			return c.SettleCharge(ctx, it.ChargeID)
		}
	case ChangeDueDate:
		switch it.Target {
		case TargetParcel:
			return c.UpdateParcel(ctx, it.CarnetID, it.Parcel, it.Charges[0].NewDue)
		case TargetParcels:
			ps := make([]api.ParcelDue, len(it.Charges))
			for i, ch := range it.Charges {
				ps[i] = api.ParcelDue{Parcel: ch.Parcel, ExpireAt: ch.NewDue}
			}
			return c.UpdateParcels(ctx, it.CarnetID, ps)
		case TargetCharge:
			return c.UpdateBillet(ctx, it.ChargeID, it.Charges[0].NewDue)
		case TargetCobv:
			_, err := c.PatchCobV(ctx, it.Txid, api.CobPatch{Calendario: &api.PixCalendario{DataDeVencimento: it.Charges[0].NewDue}})
			return err
		}
	case Resend:
		switch it.Target {
		case TargetCarnet:
			return c.ResendCarnet(ctx, it.CarnetID, it.Email)
		case TargetParcel:
			return c.ResendParcel(ctx, it.CarnetID, it.Parcel, it.Email)
		case TargetCharge:
			return c.ResendBillet(ctx, it.ChargeID, it.Email)
		}
	}
	return fmt.Errorf("ação %s sobre %s não suportada", it.Kind, it.Target)
}

// look is what a lookup found.
type look struct {
	applied bool   // the item's change is in place
	reason  string // it no longer applies (and why)
	obs     []status.Observation
}

// chargeNow is one charge as the service shows it now.
type chargeNow struct {
	status, due string
	obs         status.Observation
}

// lookup asks the service how the item's charges stand now.
func (e *executor) lookup(ctx context.Context, it Item) (look, error) {
	now := map[string]chargeNow{}
	switch it.Target {
	case TargetCarnet, TargetParcel, TargetParcels:
		cn, err := e.cl.GetCarnet(ctx, it.CarnetID)
		if err != nil {
			return look{}, err
		}
		for _, p := range cn.Charges {
			key := status.KeyOfCharge(p.ChargeID)
			o := status.ChargeObservation(&api.ChargeSummary{ID: p.ChargeID, Status: p.Status, Total: p.Value})
			now[key] = chargeNow{status: p.Status, due: p.ExpireAt, obs: o}
		}
	case TargetCharge:
		ch, err := e.cl.GetCharge(ctx, it.ChargeID)
		if err != nil {
			return look{}, err
		}
		due := ""
		if ch.Payment != nil && ch.Payment.BankingBillet != nil {
			due = ch.Payment.BankingBillet.ExpireAt
		}
		cs := &api.ChargeSummary{ID: ch.ChargeID, Status: ch.Status, Total: ch.Total}
		now[status.KeyOfCharge(ch.ChargeID)] = chargeNow{status: ch.Status, due: due, obs: status.ChargeObservation(cs)}
	case TargetCobv:
		cb, err := e.cl.GetCobV(ctx, it.Txid)
		if err != nil {
			return look{}, err
		}
		now[status.KeyOfCobv(it.Txid)] = chargeNow{status: cb.Status, due: cb.Calendario.DataDeVencimento,
			obs: status.CobvObservation(it.Txid, cb.Status, cb.Pix)}
	}
	var lk look
	open, applied := 0, 0
	for _, ref := range it.Charges {
		cur, ok := now[ref.Key]
		if !ok {
			continue
		}
		o := cur.obs
		o.Key = ref.Key
		state := o.State
		switch {
		case it.Kind == ChangeDueDate && state == status.StateOpen && cur.due == ref.NewDue:
			applied++
			lk.obs = append(lk.obs, status.Observation{Key: ref.Key, Due: ref.NewDue})
			continue
		case it.Kind == ChangeDueDate && state == status.StateOpen:
			open++
		case it.Kind == Cancel && state == status.StateCancelled, it.Kind == Settle && state == status.StateSettled:
			applied++
		case state == status.StateOpen:
			open++
		default:
			if lk.reason == "" {
				lk.reason = notApplicable(it.Kind, &status.Charge{State: state})
			}
		}
		lk.obs = append(lk.obs, o)
	}
	switch {
	case open > 0:
		lk.reason, lk.obs = "", nil // still to do: send it
	case applied > 0:
		lk.applied = true
	case lk.reason == "":
		lk.reason = "não se aplica: a cobrança não foi encontrada"
	}
	return lk, nil
}

// expected is the effect of an applied item when it could not be read
// back from the service.
func expected(it Item) []status.Observation {
	var obs []status.Observation
	for _, ref := range it.Charges {
		switch it.Kind {
		case ChangeDueDate:
			obs = append(obs, status.Observation{Key: ref.Key, Due: ref.NewDue})
		case Cancel:
			st := "canceled"
			if ref.Txid != "" {
				st = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
			}
			obs = append(obs, status.Observation{Key: ref.Key, Status: st, State: status.StateCancelled})
		case Settle:
			obs = append(obs, status.Observation{Key: ref.Key, Status: "settled", State: status.StateSettled, PaidCents: ref.ValueCents, Method: status.MethodManual})
		}
	}
	return obs
}

// apply records observations in the source run's ledger.
func (e *executor) apply(ctx context.Context, obs []status.Observation) error {
	if len(obs) == 0 {
		return nil
	}
	e.lmu.Lock()
	defer e.lmu.Unlock()
	_, err := e.ledger.Apply(ctx, obs, e.opts.now(), "acao:"+e.meta.Kind)
	return err
}

// secondCopy downloads the row's PDF into <copy dir>/<key>/.
func (e *executor) secondCopy(ctx context.Context, idx int, it Item) error {
	u := it.PDF
	if pu, err := url.Parse(u); err == nil && e.base != "" && (strings.HasPrefix(pu.Host, "127.0.0.1") || strings.HasPrefix(pu.Host, "localhost")) {
		// the embedded sandbox may listen elsewhere now
		if bu, err := url.Parse(e.base); err == nil {
			pu.Scheme, pu.Host = bu.Scheme, bu.Host
			u = pu.String()
		}
	}
	var body []byte
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if body, err = download(ctx, u); err == nil {
			break
		}
		time.Sleep(e.backoff(attempt))
	}
	if err != nil {
		return fmt.Errorf("segunda via de %s: %w", it.RowKey, err)
	}
	name := fmt.Sprintf("boleto-%d.pdf", it.Charges[0].ChargeID)
	if it.CarnetID != 0 {
		name = fmt.Sprintf("carne-%d.pdf", it.CarnetID)
	}
	rel := filepath.Join(e.meta.CopyDir, safeName(it.RowKey), name)
	path := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", body, 0o644); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	return e.setRow(ctx, idx, Result{State: StateDone, Files: []string{rel}}, 0, "", 0, "")
}

func download(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", api.RedactString(u), resp.StatusCode)
	}
	return b, nil
}

// finish applies every recorded effect to the ledger again (a process
// killed between the journal and the ledger left it behind; applying is
// idempotent), writes the zip of second copies and the reports.
func (e *executor) finish(ctx context.Context) (*Outcome, error) {
	rows, err := e.jn.Rows(ctx)
	if err != nil {
		return nil, err
	}
	out := &Outcome{ID: e.meta.ID, Dir: e.dir, Plan: e.plan}
	var all []status.Observation
	var files []string
	for _, r := range rows {
		it, res := decodeRow(r)
		out.Items = append(out.Items, ItemOutcome{Item: it, Result: res})
		switch res.State {
		case StateDone:
			out.Done++
		case StateSkipped:
			out.Skipped++
		case StateUncertain, StateAmbiguous:
			out.Uncertain++
		case StateFailed:
			out.Failed++
		default:
			out.Pending++
		}
		all = append(all, res.Obs...)
		files = append(files, res.Files...)
	}
	if err := e.apply(ctx, all); err != nil {
		return nil, err
	}
	crashAt("acao-ledger")
	if e.meta.Kind == SecondCopy && len(files) > 0 && out.Pending == 0 {
		sort.Strings(files)
		out.Zip = e.meta.CopyDir + ".zip"
		if err := writeZip(filepath.Join(e.dir, out.Zip), e.dir, files); err != nil {
			return nil, err
		}
	}
	if err := out.write(); err != nil {
		return nil, err
	}
	if e.opts.Progress != nil {
		out.WriteSummary(e.opts.Progress)
	}
	return out, nil
}

func writeZip(path, dir string, files []string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			f.Close()
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			f.Close()
			return err
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// write saves resultado.json and relatorio.txt in the action folder.
func (o *Outcome) write() error {
	b, _ := json.MarshalIndent(o, "", "  ")
	if err := os.WriteFile(filepath.Join(o.Dir, "resultado.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(o.Dir, "relatorio.txt"))
	if err != nil {
		return err
	}
	defer f.Close()
	o.WriteReport(f)
	return nil
}

var stateWord = map[string]string{StateDone: "feito", StateSkipped: "não se aplica", StateUncertain: "incerto", StateAmbiguous: "incerto",
	StateFailed: "recusado", StatePending: "pendente", StateSending: "pendente"}

// WriteReport writes one line per item and the totals.
func (o *Outcome) WriteReport(w io.Writer) {
	if o.Plan != nil {
		fmt.Fprintf(w, "Ação %s (%s) sobre a execução %s — pasta %s\n", o.Plan.Name, o.Plan.Kind, o.Plan.SourceRunID, o.Dir)
	}
	for _, it := range o.Items {
		line := fmt.Sprintf("  [%s] %s", stateWord[it.State], it.Text)
		if it.Reason != "" {
			line += " — " + it.Reason
		}
		fmt.Fprintln(w, line)
	}
	if o.Plan != nil && len(o.Plan.Skipped) > 0 {
		fmt.Fprintf(w, "Não se aplica já no plano (%d):\n", len(o.Plan.Skipped))
		for _, s := range o.Plan.Skipped {
			fmt.Fprintf(w, "  %s de %s: %s\n", s.What, s.RowKey, s.Reason)
		}
	}
	if o.Plan != nil && len(o.Plan.UnknownKeys) > 0 {
		fmt.Fprintf(w, "Chaves que não estão na execução (%d): %s\n", len(o.Plan.UnknownKeys), strings.Join(o.Plan.UnknownKeys, ", "))
	}
	o.WriteSummary(w)
}

// WriteSummary writes the totals line.
func (o *Outcome) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "%d feitas, %d não se aplicam, %d incertas, %d recusadas, %d pendentes", o.Done, o.Skipped, o.Uncertain, o.Failed, o.Pending)
	if o.Zip != "" {
		fmt.Fprintf(w, "; zip: %s", filepath.Join(o.Dir, o.Zip))
	}
	fmt.Fprintln(w)
}

// crash points (tests): REMESSA_CRASH_AT=phase:n kills the process the
// n-th time it passes phase (acao-seed, acao-intent, acao-sent,
// acao-lookup, acao-done, acao-ledger).
var crash = struct {
	once  sync.Once
	phase string
	n     int64
	seen  atomic.Int64
}{}

func crashAt(phase string) {
	crash.once.Do(func() {
		v := os.Getenv("REMESSA_CRASH_AT")
		if i := strings.LastIndexByte(v, ':'); i > 0 {
			if n, err := strconv.ParseInt(v[i+1:], 10, 64); err == nil && n > 0 {
				crash.phase, crash.n = v[:i], n
			}
		}
	})
	if crash.n == 0 || phase != crash.phase {
		return
	}
	if crash.seen.Add(1) == crash.n {
		killSelf()
	}
}
