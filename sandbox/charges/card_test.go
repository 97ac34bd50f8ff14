package charges

import (
	"math/big"
	"net/http"
	"strings"
	"testing"

	"remessa/api"
)

func TestRoundCentsBoundary(t *testing.T) {
	cases := []struct {
		num, den int64
		want     int64
	}{
		{24689, 20, 1234},         // 1234.45 cents = R$ 12,3445 -> third decimal 4: down
		{2469, 2, 1235},           // 1234.5 cents = R$ 12,345 -> third decimal 5: up
		{123449999, 100000, 1234}, // 1234.49999
		{123450001, 100000, 1235}, // 1234.50001
		{1000, 1, 1000},
	}
	for _, c := range cases {
		if got := roundCents(big.NewRat(c.num, c.den)); got != c.want {
			t.Errorf("roundCents(%d/%d) = %d, want %d", c.num, c.den, got, c.want)
		}
	}
}

func TestInstallmentValues(t *testing.T) {
	// Expected values computed independently with exact fractions:
	// total·i·(1+i)^n/((1+i)^n−1), rounded half up at the cent.
	want199 := map[int]int64{2: 5150, 3: 3467, 4: 2626, 5: 2121, 6: 1785, 7: 1545, 8: 1365, 9: 1225, 10: 1113, 11: 1021, 12: 945}
	for n, w := range want199 {
		if got := installmentValue(10000, n, 199); got != w {
			t.Errorf("10000 in %d at 1,99%%: %d, want %d", n, got, w)
		}
	}
	// 94.5015... cents rounds up; 514.974 rounds up; 212.0968 rounds up.
	if got := installmentValue(1000, 12, 199); got != 95 {
		t.Errorf("1000 in 12: %d, want 95", got)
	}
	if got := installmentValue(123456, 7, 249); got != 19436 {
		t.Errorf("123456 in 7 at 2,49%%: %d, want 19436", got)
	}
	if got := installmentValue(10000, 1, 199); got != 10000 {
		t.Errorf("1 installment: %d", got)
	}
}

func TestFormatCurrency(t *testing.T) {
	for cents, want := range map[int64]string{0: "0,00", 5: "0,05", 5187: "51,87", 123456: "1.234,56", 100000000: "1.000.000,00"} {
		if got := formatCurrency(cents); got != want {
			t.Errorf("formatCurrency(%d) = %q, want %q", cents, got, want)
		}
	}
}

func TestInstallmentsRoutes(t *testing.T) {
	e := newEnv(t, "")
	opts, err := e.c.Installments(ctx, "visa", 10000)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Name != "visa" || opts.Rate != 199 || len(opts.Installments) != 12 {
		t.Fatalf("options %+v", opts)
	}
	first, second := opts.Installments[0], opts.Installments[1]
	if first.Installment != 1 || first.HasInterest || first.Value != 10000 || first.Currency != "100,00" || first.InterestPercentage != 0 {
		t.Fatalf("installment 1: %+v", first)
	}
	if second.Installment != 2 || !second.HasInterest || second.Value != 5150 || second.Currency != "51,50" || second.InterestPercentage != 199 {
		t.Fatalf("installment 2: %+v", second)
	}
	// Only installments of at least R$ 5,00 are offered.
	opts, err = e.c.Installments(ctx, "mastercard", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Installments) != 2 || opts.Installments[1].Value != 515 {
		t.Fatalf("1000: %+v", opts.Installments)
	}
	_, err = e.c.Installments(ctx, "diners", 1000)
	apiErr(t, err, 400, CodeInvalidBrand, "")
	_, err = e.c.Installments(ctx, "visa", 499)
	apiErr(t, err, 400, CodeMinTotal, "")
	_, err = e.c.Do(ctx, api.V1, "GET", "/v1/installments?brand=visa&total=abc", nil)
	apiErr(t, err, 400, CodeValidation, "/total")
	// Public form for the payer's browser, with CORS.
	opts, err = e.c.InstallmentsForPayee(ctx, e.creds.PayeeCode, "elo", 10000)
	if err != nil || opts.Rate != 229 {
		t.Fatalf("payee installments %+v %v", opts, err)
	}
	_, err = e.c.InstallmentsForPayee(ctx, strings.Repeat("0", 32), "elo", 10000)
	apiErr(t, err, 401, CodeInvalidAccount, "")
	resp, err := http.Get(e.srv.URL + "/v1/installments/" + e.creds.PayeeCode + "/jsonp?brand=visa&total=1000")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.StatusCode != 200 {
		t.Fatalf("CORS/status: %v %v", resp.Header, resp.StatusCode)
	}
}

func testCard(number string) api.CardData {
	b, _ := api.IdentifyBrand(number)
	return api.CardData{Brand: b, Number: number, CVV: "123", ExpirationMonth: "05", ExpirationYear: "2030"}
}

func cardPayment(tok string, n int) api.Payment {
	return api.Payment{CreditCard: &api.CreditCard{Customer: customer(), Installments: n, PaymentToken: tok, BillingAddress: address()}}
}

func TestCardFlow(t *testing.T) {
	e := newEnv(t, "")
	tok, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.PaymentToken) != 40 || tok.CardMask != "XXXXXXXXXXXX3335" {
		t.Fatalf("token %+v", tok)
	}
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(10000), Payment: cardPayment(tok.PaymentToken, 3)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "waiting" || res.Payment != "credit_card" || res.Installments != 3 || res.InstallmentValue != 3467 || res.Reason != "" {
		t.Fatalf("card result %+v", res)
	}
	// The token was used.
	_, err = e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(10000), Payment: cardPayment(tok.PaymentToken, 1)})
	apiErr(t, err, 400, CodeTokenUsed, "")
	// Another account cannot use a token of this one.
	tok2, _ := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
	_, err = e.c2.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(10000), Payment: cardPayment(tok2.PaymentToken, 1)})
	apiErr(t, err, 400, CodeInvalidToken, "")
	// A reusable token serves twice.
	cd := testCard("5555666677778884")
	cd.Reuse = true
	rt, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, cd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(10000), Payment: cardPayment(rt.PaymentToken, 1)}); err != nil {
			t.Fatalf("reuse %d: %v", i, err)
		}
	}
	// Installments below R$ 5,00 are refused.
	t3, _ := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
	_, err = e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000), Payment: cardPayment(t3.PaymentToken, 3)})
	apiErr(t, err, 400, CodeInstallments, "")
	// Card payment and then confirmation, refund.
	if err := e.mod.PaySlip(ctx, e.creds.AccountID, res.ChargeID, 10000, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	apiErr(t, e.c.SettleCharge(ctx, res.ChargeID), 400, CodeSettle, "")
	if err := e.c.RefundCard(ctx, res.ChargeID, 4000); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.c.GetCharge(ctx, res.ChargeID)
	if ch.Status != "paid" {
		t.Fatalf("after partial refund: %s", ch.Status)
	}
	apiErr(t, e.c.RefundCard(ctx, res.ChargeID, 6001), 400, CodeRefund, "")
	if err := e.c.RefundCard(ctx, res.ChargeID, 0); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.c.GetCharge(ctx, res.ChargeID)
	if ch.Status != "refunded" || ch.Payment.CreditCard.Mask != "XXXXXXXXXXXX3335" {
		t.Fatalf("after full refund: %+v", ch)
	}
	apiErr(t, e.c.RefundCard(ctx, res.ChargeID, 0), 400, CodeRefund, "")
}

func TestCardRefusalsAndRetry(t *testing.T) {
	e := newEnv(t, "")
	reasons := map[string]string{
		"4012001038443331": "Dados do cartão inválidos.",
		"4012001038443332": "Transação não autorizada por motivos de segurança.",
		"4012001038443333": "Transação não autorizada, tente novamente mais tarde.",
	}
	for number, reason := range reasons {
		tok, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard(number))
		if err != nil {
			t.Fatal(err)
		}
		cr, _ := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(10000)})
		res, err := e.c.PayCharge(ctx, cr.ChargeID, cardPayment(tok.PaymentToken, 1))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != "unpaid" || res.Reason != reason {
			t.Fatalf("%s: %+v", number, res)
		}
		ch, _ := e.c.GetCharge(ctx, cr.ChargeID)
		if ch.Status != "unpaid" || ch.Reason != reason || !strings.Contains(ch.History[len(ch.History)-1].Message, reason) {
			t.Fatalf("%s: charge %+v", number, ch)
		}
		// Retry with an approved card: back to waiting.
		ok, _ := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
		rr, err := e.c.RetryCardCharge(ctx, cr.ChargeID, api.CardRetry{Customer: customer(), BillingAddress: address(), PaymentToken: ok.PaymentToken})
		if err != nil {
			t.Fatal(err)
		}
		if rr.Status != "waiting" || rr.Reason != "" || rr.Installments != 1 {
			t.Fatalf("retry %+v", rr)
		}
		ok2, _ := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
		_, err = e.c.RetryCardCharge(ctx, cr.ChargeID, api.CardRetry{Customer: customer(), BillingAddress: address(), PaymentToken: ok2.PaymentToken})
		apiErr(t, err, 400, CodeRetry, "")
	}
	// Card customer needs e-mail, birth and phone; billing address needed.
	tok, _ := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
	p := cardPayment(tok.PaymentToken, 1)
	p.CreditCard.Customer.Birth = ""
	_, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000), Payment: p})
	apiErr(t, err, 400, CodeValidation, "/payment/credit_card/customer/birth")
	p = cardPayment(tok.PaymentToken, 13)
	_, err = e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000), Payment: p})
	apiErr(t, err, 400, CodeValidation, "/payment/credit_card/installments")
}

func TestTokenizationErrors(t *testing.T) {
	e := newEnv(t, "")
	cd := testCard("4012001038443335")
	cd.Brand = "maestro"
	_, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, cd)
	apiErr(t, err, 400, CodeInvalidBrand, "")
	_, err = e.c.PaymentToken(ctx, strings.Repeat("a", 32), testCard("4012001038443335"))
	apiErr(t, err, 401, CodeInvalidAccount, "")
	cd = testCard("4012001038443335")
	cd.ExpirationYear = "2025"
	_, err = e.c.PaymentToken(ctx, e.creds.PayeeCode, cd)
	apiErr(t, err, 400, CodeValidation, "/expiration_year")
	cd = testCard("4012001038443335")
	cd.CVV = "12"
	_, err = e.c.PaymentToken(ctx, e.creds.PayeeCode, cd)
	apiErr(t, err, 400, CodeValidation, "/cvv")
	// Garbage ciphertext.
	resp, err := http.Get(e.srv.URL + "/v1/card/" + e.creds.PayeeCode + "/jsonp?data=AAAA")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("garbage: %d %v", resp.StatusCode, resp.Header)
	}
	// The public key is stable per account.
	k1 := e.mod.pubKey(e.creds.AccountID)
	if !strings.HasPrefix(k1, "-----BEGIN PUBLIC KEY-----") {
		t.Fatalf("key %q", k1)
	}
}
