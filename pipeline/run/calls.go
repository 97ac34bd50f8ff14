package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"remessa/api"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/rules"
)

// Journaled calls: the daily quota and the rate limit of each route, the
// intent journaled before a call and its result after, and what an error
// from the service means for the run (stop, retry, or a problem of the row).

// setupQuota decides the daily request quota per route.
func (e *executor) setupQuota() {
	e.quota = map[string]int{}
	switch {
	case e.opts.Quota > 0:
		e.quota["default"] = e.opts.Quota
	case len(e.m.Quota) > 0:
		for k, v := range e.m.Quota {
			e.quota[k] = v
		}
	case e.m.Service != "embedded":
		e.quota["default"] = rules.DailyQuotaPerRoute
	}
}

func (e *executor) quotaFor(route string) int {
	if q, ok := e.quota[route]; ok {
		return q
	}
	return e.quota["default"]
}

// nextMidnight is when the daily quotas start again (São Paulo midnight).
func nextMidnight(now time.Time) time.Time {
	sp := now.In(rules.SaoPaulo)
	return time.Date(sp.Year(), sp.Month(), sp.Day()+1, 0, 0, 0, 0, rules.SaoPaulo)
}

// stopping reports whether the run is stopping (no new calls).
func (e *executor) stopping() bool { return e.stop.Load() != nil }

func (e *executor) halt(se *StopError) { e.stop.CompareAndSwap(nil, se) }

// begin waits for the route's rate limiter, checks the daily quota and
// journals the call as intended, with extra journal changes in the same
// transaction.
func (e *executor) begin(ctx context.Context, route, target string, extra func(*journal.Tx) error) (int64, error) {
	if err := e.reserve(ctx, route, true); err != nil {
		return 0, err
	}
	if e.svc != nil {
		if err := e.svc.limiter.Wait(ctx, route); err != nil {
			return 0, err
		}
	}
	var seq int64
	err := e.w.do(func(tx *journal.Tx) error {
		var err error
		if seq, err = tx.Intend(route, target); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	return seq, err
}

// reserve checks that the run goes on and counts one call of route
// against its daily quota; a quota reached stops the run when halt says.
func (e *executor) reserve(ctx context.Context, route string, halt bool) error {
	if se := e.stop.Load(); se != nil {
		return se
	}
	if q := e.quotaFor(route); q > 0 {
		e.qmu.Lock()
		day := journal.Day(e.opts.now())
		if day != e.day {
			e.day, e.used = day, map[string]int{}
		}
		n, ok := e.used[route]
		if !ok {
			c, err := e.j.CallsOn(ctx, route, day)
			if err != nil {
				e.qmu.Unlock()
				return err
			}
			n = c
		}
		if n >= q {
			e.qmu.Unlock()
			se := &StopError{Reason: fmt.Sprintf("cota diária de %d requisições da rota %s atingida", q, route), ResumeAt: nextMidnight(e.opts.now())}
			if halt {
				e.halt(se)
			}
			return se
		}
		e.used[route] = n + 1
		e.qmu.Unlock()
	}
	return nil
}

// unreserve gives back a call reserve counted and the run did not make.
func (e *executor) unreserve(route string) {
	if e.quotaFor(route) <= 0 {
		return
	}
	e.qmu.Lock()
	if e.used[route] > 0 {
		e.used[route]--
	}
	e.qmu.Unlock()
}

// end journals a call's outcome with extra changes in the same transaction.
func (e *executor) end(ctx context.Context, seq int64, callErr error, extra func(*journal.Tx) error) error {
	state, status, text := journal.CallOK, 200, ""
	if callErr != nil {
		state, text = journal.CallFailed, api.RedactString(callErr.Error())
		status = 0
		var ae *api.Error
		if errors.As(callErr, &ae) {
			status = ae.Status
		}
		if api.IsAmbiguous(callErr) {
			state = journal.CallUnknown
		}
	}
	return e.w.do(func(tx *journal.Tx) error {
		if err := tx.Finish(seq, state, status, text); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
}

// endAsync is end without waiting for the commit (see writer).
func (e *executor) endAsync(seq int64, extra func(*journal.Tx) error) {
	e.w.async(func(tx *journal.Tx) error {
		if err := tx.Finish(seq, journal.CallOK, 200, ""); err != nil {
			return err
		}
		return extra(tx)
	})
}

// classify turns a call error into a stop when the run cannot go on
// (quota, service unreachable); nil when the error concerns only the call.
func (e *executor) classify(err error) *StopError {
	if err == nil {
		return nil
	}
	var se *StopError
	if errors.As(err, &se) {
		return se
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		if ae.Status == http.StatusTooManyRequests {
			if ae.Code == 3500049 || ae.RetryAfter > api.DefaultMaxRetryWait || strings.Contains(strings.ToLower(ae.Description+ae.Err), "daily") {
				at := e.opts.now().Add(ae.RetryAfter)
				if ae.RetryAfter <= 0 {
					at = nextMidnight(e.opts.now())
				}
				return &StopError{Reason: "cota diária do serviço esgotada (429)", ResumeAt: at, Err: err}
			}
			return nil
		}
		if ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden {
			return &StopError{Reason: "o serviço recusou as credenciais", Err: err}
		}
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &StopError{Reason: "interrompida", Err: err}
	}
	if api.IsAmbiguous(err) {
		return nil
	}
	return &StopError{Reason: "serviço inacessível", Err: err}
}

// transient reports whether a call error means "not processed, try again
// later" (429 after the client's retries, 503).
func transient(err error) bool {
	var ae *api.Error
	if errors.As(err, &ae) && !ae.Ambiguous {
		return ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable
	}
	return false
}

// retryable reports whether a call error may go away by itself (429, any
// 5xx, an unknown outcome): a reason to repeat an idempotent call or to
// stop and resume later, never to deny a row.
func retryable(err error) bool {
	if transient(err) || api.IsAmbiguous(err) {
		return true
	}
	var ae *api.Error
	return errors.As(err, &ae) && ae.Status >= 500
}

// problemOf describes a service refusal for the results.
func problemOf(err error) results.Problem {
	var ae *api.Error
	p := results.Problem{Code: "erro_servico", Message: api.RedactString(err.Error()), MessageEN: api.RedactString(err.Error())}
	if errors.As(err, &ae) {
		switch {
		case ae.Code != 0:
			p.Code = strconv.Itoa(ae.Code)
			p.Field = ae.Property
			if ae.Description != "" {
				p.Message = ae.Description
			}
		case ae.Problem != nil:
			p.Code, p.Message = ae.Problem.TypeName(), problemText(ae.Problem)
		case ae.Nome != "":
			p.Code, p.Message = ae.Nome, ae.Mensagem
		}
	}
	p.Action = "corrija a linha e envie-a de novo numa nova execução (ela está no arquivo de linhas rejeitadas)"
	p.ActionEN = "fix the row and send it again in a new run (it is in the rejected rows file)"
	return p
}

// problemText is a Pix problem as one message: its title, its detail and
// each violation's property and reason.
func problemText(pr *api.Problem) string {
	msg := pr.Title
	if pr.Detail != "" {
		msg += ": " + pr.Detail
	}
	for _, v := range pr.Violacoes {
		msg += "; " + v.Propriedade + ": " + v.Razao
	}
	return msg
}
