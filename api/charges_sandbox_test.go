package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/rules"
	"remessa/sandbox"
	_ "remessa/sandbox/charges"
	"remessa/sandbox/faults"
	"remessa/sandbox/sandboxtest"
)

// TestChargesThroughSandbox runs the charges client methods against a
// sandbox started with the core's Start (modules registered as in the
// binary).
func TestChargesThroughSandbox(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "cid-charges", ClientSecret: "secret-charges"})
	c := sandboxclient.Client(t, rn, nil)
	ctx := context.Background()
	due := rules.Today(time.Now()).AddDate(0, 0, 5).Format("2006-01-02")
	cust := api.Customer{Name: "Fulano de Tal", CPF: "52998224725", Email: "f@example.com", PhoneNumber: "11987654321", Birth: "1980-05-05"}
	res, err := c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Curso", Value: 15075, Amount: 1}},
		Metadata: &api.Metadata{CustomID: "api-1"},
		Payment:  api.Payment{BankingBillet: &api.BankingBillet{Customer: cust, ExpireAt: due}}})
	if err != nil {
		t.Fatal(err)
	}
	bc, err := rules.BarcodeFromTypedLine(res.Barcode)
	if err != nil || rules.CheckBarcode(bc) != nil || !strings.HasPrefix(bc, "3649") {
		t.Fatalf("slip codes %q: %v", res.Barcode, err)
	}
	if _, err := rules.ParseBRCode(res.Pix.QRCode); err != nil {
		t.Fatal(err)
	}
	ch, err := c.GetCharge(ctx, res.ChargeID)
	if err != nil || ch.Status != "waiting" || *ch.CustomID != "api-1" {
		t.Fatalf("charge %+v %v", ch, err)
	}
	l, err := c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "billet", BeginDate: "2000-01-01", EndDate: "2099-12-31", CustomID: "api-1"})
	if err != nil || len(l.Data) != 1 || l.Data[0].ID != res.ChargeID {
		t.Fatalf("list %+v %v", l, err)
	}
	tok, err := c.PaymentToken(ctx, rn.PayeeCode, api.CardData{Number: "4012001038443331", CVV: "123", ExpirationMonth: "12", ExpirationYear: "2035"})
	if err != nil {
		t.Fatal(err)
	}
	card, err := c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: []api.Item{{Name: "Curso", Value: 15075}},
		Payment: api.Payment{CreditCard: &api.CreditCard{Customer: cust, Installments: 2, PaymentToken: tok.PaymentToken,
			BillingAddress: api.Address{Street: "Rua A", Number: "1", Neighborhood: "Centro", Zipcode: "01001000", City: "São Paulo", State: "SP"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if card.Status != "unpaid" || card.Reason != "Dados do cartão inválidos." {
		t.Fatalf("card %+v", card)
	}
	opts, err := c.InstallmentsForPayee(ctx, rn.PayeeCode, "visa", 15075)
	if err != nil || len(opts.Installments) == 0 {
		t.Fatalf("installments %+v %v", opts, err)
	}
	cn, err := c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Mensalidade", Value: 9900}}, Customer: cust, ExpireAt: due, Repeats: 3})
	if err != nil || len(cn.Charges) != 3 || cn.Charges[2].Parcel != 3 {
		t.Fatalf("carnet %+v %v", cn, err)
	}
	_, err = c.GetCarnet(ctx, cn.CarnetID+1000)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Code != 3500010 || ae.Property != "id" {
		t.Fatalf("unknown carnet: %v", err)
	}
	// Document links point at the sandbox (served by the documents module
	// when it is linked in; here only the charges module is).
	if !strings.HasPrefix(cn.Charges[0].URL, rn.URL+"/v1/documents/charge/") {
		t.Fatalf("parcel url %q", cn.Charges[0].URL)
	}
}

// TestChargesUnderEveryFault creates charges through the client with
// every fault kind on at once (latency, 500, 503, 429 with Retry-After,
// dropped connections after processing, a daily quota): POSTs are sent
// again only after a 429, every acknowledged charge exists exactly once,
// an ambiguous failure is reported as ambiguous (and the charge exists at
// most once), a plain refusal was not processed; GETs and PUTs with an id
// are retried until they succeed.
func TestChargesUnderEveryFault(t *testing.T) {
	srv := newServer(t, sandbox.Config{})
	cs := newCounting(t, srv)
	creds := srv.Credentials()
	var waits []time.Duration
	c, _ := api.New(api.Config{BaseURL: cs.URL, ClientID: creds.ClientID, ClientSecret: creds.ClientSecret, MaxRetries: 40,
		Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	if _, err := c.Authorize(context.Background()); err != nil { // the token before the faults
		t.Fatal(err)
	}
	setFaults(t, srv, faults.Config{Seed: 5, All: faults.Rule{Latency: faults.Duration(time.Millisecond), Jitter: faults.Duration(time.Millisecond),
		P500: 0.1, P503: 0.1, P429: 0.1, RetryAfter: 2, Drop: 0.1, Quota: 100000}})
	ctx := context.Background()
	const n = 80
	type outcome struct {
		id        int64
		err       error
		ambiguous bool
	}
	out := make([]outcome, n)
	waits = nil
	for i := range out {
		cr, err := c.CreateCharge(ctx, api.ChargeRequest{Items: []api.Item{{Name: "Curso", Value: 1000 + int64(i), Amount: 1}},
			Metadata: &api.Metadata{CustomID: fmt.Sprintf("fault-%d", i)}})
		out[i].err, out[i].ambiguous = err, api.IsAmbiguous(err)
		if err == nil {
			out[i].id = cr.ChargeID
		}
	}
	// Only 429s made the client send a POST again, after Retry-After.
	posts := cs.count("POST /v1/charge")
	if posts != n+len(waits) {
		t.Fatalf("%d POSTs for %d creations and %d waits: a POST was re-sent without a 429", posts, n, len(waits))
	}
	for _, w := range waits {
		if w != 2*time.Second {
			t.Fatalf("POST waited %v, want the Retry-After of 2s", w)
		}
	}
	// Every outcome against the server's state, read with the faults still on.
	var ok, ambiguousDone, ambiguousNot, refused int
	for i, o := range out {
		l, err := c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "billet", BeginDate: "2000-01-01", EndDate: "2099-12-31", CustomID: fmt.Sprintf("fault-%d", i)})
		if err != nil {
			t.Fatalf("list under faults: %v", err)
		}
		switch {
		case o.err == nil:
			ok++
			if len(l.Data) != 1 || l.Data[0].ID != o.id {
				t.Fatalf("acknowledged charge %d: list %+v", i, l.Data)
			}
		case o.ambiguous:
			if len(l.Data) > 1 {
				t.Fatalf("ambiguous creation %d made %d charges", i, len(l.Data))
			}
			if len(l.Data) == 1 {
				ambiguousDone++
			} else {
				ambiguousNot++
			}
		default:
			refused++
			var ae *api.Error
			if !errors.As(o.err, &ae) || ae.Status != 503 {
				t.Fatalf("creation %d: unexpected error %v", i, o.err)
			}
			if len(l.Data) != 0 {
				t.Fatalf("creation %d refused with 503 but processed", i)
			}
		}
	}
	if ok == 0 || ambiguousDone == 0 || ambiguousNot == 0 || refused == 0 {
		t.Fatalf("outcomes: %d ok, %d ambiguous processed, %d ambiguous not processed, %d refused; want each kind", ok, ambiguousDone, ambiguousNot, refused)
	}
	// GETs and PUTs with an id are retried through every fault.
	gets0 := cs.count("GET /v1/charges")
	if gets0 <= n {
		t.Fatalf("%d list requests for %d lists: no retry", gets0, n)
	}
	for _, o := range out {
		if o.id == 0 {
			continue
		}
		if err := c.UpdateChargeMetadata(ctx, o.id, api.MetadataUpdate{NotificationURL: ptrStr("https://example.com/n")}); err != nil {
			t.Fatalf("metadata under faults: %v", err)
		}
		ch, err := c.GetCharge(ctx, o.id)
		if err != nil || ch.NotificationURL == nil || *ch.NotificationURL != "https://example.com/n" {
			t.Fatalf("get under faults: %+v %v", ch, err)
		}
	}
}

func ptrStr(s string) *string { return &s }
