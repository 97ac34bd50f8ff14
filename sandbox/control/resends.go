package control

import (
	"context"
	"net/http"
	"strconv"

	"remessa/sandbox/charges"
	"remessa/sandbox/httpx"
)

// resendLister is the charges module's record of resends (*charges.Module).
type resendLister interface {
	Resends(ctx context.Context, account string, after int64) ([]charges.Resend, error)
}

// ResendsAnswer is the answer of GET /sandbox/resends.
type ResendsAnswer struct {
	Resends []charges.Resend `json:"resends"`
}

// handleResends lists what the resend routes (POST /v1/carnet/:id/resend,
// /v1/carnet/:id/parcel/:n/resend, /v1/charge/:id/billet/resend,
// /v1/charge/:id/link/resend) accepted: ?account= one account's, ?after=
// those after a seq.
func (m *Module) handleResends(w http.ResponseWriter, r *http.Request) {
	var after int64
	if s := r.URL.Query().Get("after"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			fail(w, http.StatusBadRequest, "invalid_after", "after", "after %q: esperado um número inteiro não negativo", s)
			return
		}
		after = n
	}
	c, ok := m.charges()
	rl, ok2 := c.(resendLister)
	if !ok || !ok2 {
		fail(w, http.StatusNotFound, "no_charges", "", "o módulo de cobranças não está ativo neste sandbox")
		return
	}
	list, err := rl.Resends(r.Context(), r.URL.Query().Get("account"), after)
	if err != nil {
		m.log.Error().Err(err).Msg("control: list resends")
		fail(w, http.StatusInternalServerError, "internal", "", "não foi possível listar os reenvios")
		return
	}
	httpx.WriteJSON(w, http.StatusOK, ResendsAnswer{Resends: list})
}
