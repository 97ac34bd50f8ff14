package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/rules"
	"remessa/sandbox"
	_ "remessa/sandbox/charges"
	"remessa/sandbox/sandboxtest"
)

// TestChargesThroughSandbox runs the charges client methods against a
// sandbox started with the core's Start (modules registered as in the
// binary).
func TestChargesThroughSandbox(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "cid-charges", ClientSecret: "secret-charges"})
	c := sandboxtest.Client(t, rn, nil)
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
