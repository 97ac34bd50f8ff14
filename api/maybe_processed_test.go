package api_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/sandbox"
	"remessa/sandbox/faults"
)

const earlierSuffix = "uma tentativa anterior ficou sem resposta e pode ter sido processada"

// TestRetryRefusedAfterUnknownAttemptSaysMaybeProcessed: a PUT cancel
// whose first attempt reaches the sandbox and loses its answer (fault
// injection: processed, then the connection dropped) is retried, and the
// retry is refused with 3500043 because the charge is canceled already.
// The error says an earlier attempt may have been processed, while
// IsAmbiguous stays false (pipeline/run reads that as "the answer itself
// is unknown"). A 500 before the refusal marks it too (a real 500 may have
// been processed); a 503 or 429 (not processed) and a refusal without
// earlier failure do not.
func TestRetryRefusedAfterUnknownAttemptSaysMaybeProcessed(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret,
		Sleep: func(context.Context, time.Duration) error {
			setFaults(t, srv, faults.Config{}) // the fault hits the first attempt only
			return nil
		}})
	ctx := context.Background()
	newCharge := func(canceled bool) int64 {
		t.Helper()
		cr, err := c.CreateCharge(ctx, api.ChargeRequest{Items: []api.Item{{Name: "Curso", Value: 5000, Amount: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if canceled {
			if err := c.CancelCharge(ctx, cr.ChargeID); err != nil {
				t.Fatal(err)
			}
		}
		return cr.ChargeID
	}
	for _, tc := range []struct {
		name        string
		fault       *faults.Override // on the first attempt only
		canceled    bool             // before the faulted call
		attempts    int
		earlierLost bool
	}{
		{"drop after processing", &faults.Override{Drop: f64(1)}, false, 2, true},
		{"500 then refusal", &faults.Override{P500: f64(1)}, true, 2, true},
		{"503 then refusal", &faults.Override{P503: f64(1)}, true, 2, false},
		{"429 then refusal", &faults.Override{P429: f64(1)}, true, 2, false},
		{"refusal alone", nil, true, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := newCharge(tc.canceled)
			path := "/v1/charge/" + itoa(id) + "/cancel"
			before := cs.count("PUT " + path)
			if tc.fault != nil {
				setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"PUT /v1/charge/:id/cancel": *tc.fault}})
			}
			err := c.CancelCharge(ctx, id)
			setFaults(t, srv, faults.Config{})
			if n := cs.count("PUT "+path) - before; n != tc.attempts {
				t.Fatalf("%d attempts, want %d", n, tc.attempts)
			}
			e := asAPIError(t, err)
			if e.Status != 400 || e.Code != 3500043 {
				t.Fatalf("error %v, want 400 3500043 (already canceled)", err)
			}
			if api.IsAmbiguous(err) || e.Ambiguous {
				t.Fatalf("IsAmbiguous(%v) = true: the refusal is a known answer", err)
			}
			if e.EarlierAttemptUnknown != tc.earlierLost || e.MaybeProcessed() != tc.earlierLost ||
				api.MaybeProcessed(err) != tc.earlierLost || errors.Is(err, api.ErrEarlierAttemptUnknown) != tc.earlierLost {
				t.Fatalf("%v: EarlierAttemptUnknown %v, MaybeProcessed %v/%v, Is %v; want all %v", err, e.EarlierAttemptUnknown,
					e.MaybeProcessed(), api.MaybeProcessed(err), errors.Is(err, api.ErrEarlierAttemptUnknown), tc.earlierLost)
			}
			if strings.Contains(err.Error(), earlierSuffix) != tc.earlierLost {
				t.Fatalf("message %q: the earlier attempt is mentioned = %v, want %v", err, !tc.earlierLost, tc.earlierLost)
			}
			ch, gerr := c.GetCharge(ctx, id)
			if gerr != nil || ch.Status != "canceled" {
				t.Fatalf("charge after the call: %+v %v, want canceled", ch, gerr)
			}
		})
	}
}

// TestRetriesExhaustedAfterSendSayMaybeProcessed: a PUT whose every
// attempt is processed and dropped ends with a transport error that wraps
// ErrEarlierAttemptUnknown (not ErrAmbiguous: pipeline/run keeps treating
// it as an unreachable service); the metadata was in fact changed.
func TestRetriesExhaustedAfterSendSayMaybeProcessed(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, MaxRetries: 2,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	ctx := context.Background()
	cr, err := c.CreateCharge(ctx, api.ChargeRequest{Items: []api.Item{{Name: "Curso", Value: 5000, Amount: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"PUT /v1/charge/:id/metadata": {Drop: f64(1)}}})
	err = c.UpdateChargeMetadata(ctx, cr.ChargeID, api.MetadataUpdate{CustomID: ptrStr("feito")})
	setFaults(t, srv, faults.Config{})
	var ae *api.Error
	if err == nil || errors.As(err, &ae) || api.IsAmbiguous(err) || !api.MaybeProcessed(err) {
		t.Fatalf("error %v: want a transport error, not ambiguous, maybe processed", err)
	}
	if n := cs.count("PUT /v1/charge/" + itoa(cr.ChargeID) + "/metadata"); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	if ch, err := c.GetCharge(ctx, cr.ChargeID); err != nil || ch.CustomID == nil || *ch.CustomID != "feito" {
		t.Fatalf("charge %+v %v: the dropped PUTs were processed", ch, err)
	}
	// The token route changes nothing: a refusal after a lost answer is
	// not marked.
	bad, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: "errado",
		Sleep: func(context.Context, time.Duration) error { setFaults(t, srv, faults.Config{}); return nil }})
	before := cs.count("POST /v1/authorize")
	setFaults(t, srv, faults.Config{Routes: map[string]faults.Override{"POST /v1/authorize": {Drop: f64(1)}}})
	_, err = bad.Authorize(ctx)
	if n := cs.count("POST /v1/authorize") - before; n != 2 {
		t.Fatalf("%d token requests, want 2 (the dropped one re-sent)", n)
	}
	e := asAPIError(t, err)
	if e.Status != 401 || e.EarlierAttemptUnknown || api.MaybeProcessed(err) || strings.Contains(err.Error(), earlierSuffix) {
		t.Fatalf("bad credentials after a drop: %v (%+v)", err, e)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
