package charges

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/rules"
)

func TestCreateGetAndNotification(t *testing.T) {
	e := newEnv(t, "")
	res, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: []api.Item{{Name: "Meu Produto", Value: 5990, Amount: 2}},
		Shippings: []api.Shipping{{Name: "Frete", Value: 1000}},
		Metadata:  &api.Metadata{CustomID: "pedido-1", NotificationURL: "https://example.com/notify"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "new" || res.Total != 2*5990+1000 || res.CustomID == nil || *res.CustomID != "pedido-1" {
		t.Fatalf("creation result %+v", res)
	}
	if res.CreatedAt != "2026-03-10 12:00:00" {
		t.Fatalf("created_at %q, want São Paulo time 2026-03-10 12:00:00", res.CreatedAt)
	}
	ch, err := e.c.GetCharge(ctx, res.ChargeID)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Status != "new" || len(ch.Items) != 1 || ch.Items[0].Amount != 2 || len(ch.History) != 1 || ch.Payment != nil {
		t.Fatalf("charge %+v", ch)
	}
	if ch.NotificationURL == nil || *ch.NotificationURL != "https://example.com/notify" {
		t.Fatalf("notification_url %v", ch.NotificationURL)
	}
	// The creation was queued as a notification carrying only the token.
	got := e.note.all()
	if len(got) != 1 || got[0].url != "https://example.com/notify" || got[0].contentType != "application/x-www-form-urlencoded" {
		t.Fatalf("deliveries %+v", got)
	}
	tok := strings.TrimPrefix(got[0].body, "notification=")
	changes, err := e.c.GetNotification(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].ID != 1 || changes[0].Type != "charge" || changes[0].Status.Current != "new" ||
		changes[0].Status.Previous != nil || changes[0].Identifiers.ChargeID != res.ChargeID || *changes[0].CustomID != "pedido-1" {
		t.Fatalf("changes %+v", changes)
	}
	// Another account sees neither the charge nor the token, exactly like
	// missing ones.
	_, errForeign := e.c2.GetCharge(ctx, res.ChargeID)
	_, errMissing := e.c2.GetCharge(ctx, 999999999)
	a1 := apiErr(t, errForeign, 400, CodeNotFound, "id")
	a2 := apiErr(t, errMissing, 400, CodeNotFound, "id")
	if a1.Description != a2.Description || a1.Err != a2.Err {
		t.Fatalf("foreign %+v differs from missing %+v", a1, a2)
	}
	_, err = e.c2.GetNotification(ctx, tok)
	apiErr(t, err, 400, CodeNotFound, "token")
	// Metadata update and history; a change of metadata is not a status change.
	if err := e.c.UpdateChargeMetadata(ctx, res.ChargeID, api.MetadataUpdate{CustomID: ptr("pedido-1b")}); err != nil {
		t.Fatal(err)
	}
	if err := e.c.AddChargeHistory(ctx, res.ChargeID, "Cliente ligou"); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.c.GetCharge(ctx, res.ChargeID)
	if *ch.CustomID != "pedido-1b" || ch.History[len(ch.History)-1].Message != "Cliente ligou" {
		t.Fatalf("after metadata/history: %+v", ch)
	}
	err = e.c.AddChargeHistory(ctx, res.ChargeID, strings.Repeat("a", 256))
	apiErr(t, err, 400, CodeValidation, "/description")
	err = e.c.AddChargeHistory(ctx, res.ChargeID, "")
	apiErr(t, err, 400, CodeValidation, "/description")
	err = e.c.UpdateChargeMetadata(ctx, res.ChargeID, api.MetadataUpdate{NotificationURL: ptr("ftp://x")})
	apiErr(t, err, 400, CodeValidation, "/notification_url")
}

// checkSlip verifies the codes of a slip independently of how they were
// built: barcode check digits, bank 364, due factor, amount, BR Code.
func checkSlip(t *testing.T, e *env, typedLine, brcode, image string, due string, cents int64) {
	t.Helper()
	bc, err := rules.BarcodeFromTypedLine(typedLine)
	if err != nil {
		t.Fatalf("typed line %q: %v", typedLine, err)
	}
	if err := rules.CheckBarcode(bc); err != nil {
		t.Fatalf("barcode %q: %v", bc, err)
	}
	if bc[:3] != "364" || bc[3] != '9' {
		t.Fatalf("barcode %q: bank/currency", bc)
	}
	d, _ := rules.ParseISODate(due)
	// Factor: days since 1997-10-07, with the 2025 reset (standards §1.4).
	days := int(d.Sub(time.Date(1997, 10, 7, 0, 0, 0, 0, time.UTC)).Hours() / 24)
	factor := (days-1000)%9000 + 1000
	if bc[5:9] != fmt.Sprintf("%04d", factor) {
		t.Fatalf("barcode %q: factor %s, want %04d for %s", bc, bc[5:9], factor, due)
	}
	if bc[9:19] != fmt.Sprintf("%010d", cents) {
		t.Fatalf("barcode %q: amount %s, want %d", bc, bc[9:19], cents)
	}
	br, err := rules.ParseBRCode(brcode)
	if err != nil {
		t.Fatalf("BR Code %q: %v", brcode, err)
	}
	host := strings.TrimPrefix(e.srv.URL, "http://")
	if !br.Dynamic || !strings.HasPrefix(br.URL, host+"/v2/cobv/") || len(br.URL) > 77 {
		t.Fatalf("BR Code %q: location %q, want %s/v2/cobv/...", brcode, br.URL, host)
	}
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(image, prefix) {
		t.Fatalf("qrcode_image prefix %.40q", image)
	}
	raw, err := base64.StdEncoding.DecodeString(image[len(prefix):])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("qrcode_image is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != b.Dy() || b.Dx() < 100 {
		t.Fatalf("QR image %v", b)
	}
}

func TestOneStepBillet(t *testing.T) {
	e := newEnv(t, "")
	days := int64(5)
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(150075), Metadata: &api.Metadata{CustomID: "os-1"},
		Payment: api.Payment{BankingBillet: &api.BankingBillet{Customer: customer(), ExpireAt: "2026-03-20",
			Configurations: &api.Configurations{Fine: 200, Interest: 33, DaysToWriteOff: &days},
			Message:        "Linha 1\nLinha 2", ConditionalDiscount: &api.ConditionalDiscount{Type: "currency", Value: 500, UntilDate: "2026-03-15"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "waiting" || res.Payment != "banking_billet" || res.Total != 150075 || res.ExpireAt != "2026-03-20" {
		t.Fatalf("result %+v", res)
	}
	checkSlip(t, e, res.Barcode, res.Pix.QRCode, res.Pix.QRCodeImage, "2026-03-20", 150075)
	for _, l := range []string{res.Link, res.BilletLink, res.PDF.Charge} {
		if !strings.HasPrefix(l, e.srv.URL+"/v1/documents/charge/") {
			t.Fatalf("link %q", l)
		}
	}
	ch, err := e.c.GetCharge(ctx, res.ChargeID)
	if err != nil {
		t.Fatal(err)
	}
	b := ch.Payment.BankingBillet
	if ch.Status != "waiting" || b.Barcode != res.Barcode || b.Configurations.Fine != 200 || *b.Configurations.DaysToWriteOff != 5 ||
		ch.Customer.CPF != "52998224725" || *ch.Payment.Message != "Linha 1\nLinha 2" {
		t.Fatalf("charge %+v payment %+v", ch, ch.Payment)
	}
	// The document view carries the same slip.
	tok := res.Link[len(e.srv.URL+"/v1/documents/charge/") : len(res.Link)-len("/link")]
	v, ok := e.mod.ChargeDocument(tok)
	if !ok || v.ChargeID != res.ChargeID || v.TypedLine != res.Barcode || v.ValueCents != 150075 || len(v.Messages) != 2 ||
		v.Fine != 200 || v.Interest != 33 || v.DueDate.Format("2006-01-02") != "2026-03-20" || v.Payer.Document != "52998224725" ||
		len(v.Discounts) != 1 || v.Beneficiary.Name == "" {
		t.Fatalf("document view %+v", v)
	}
	if _, ok := e.mod.ChargeDocument("nope"); ok {
		t.Fatal("unknown document token found")
	}
	// Due date change: new factor, same free field.
	if err := e.c.UpdateBillet(ctx, res.ChargeID, "2026-04-01"); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.c.GetCharge(ctx, res.ChargeID)
	checkSlip(t, e, ch.Payment.BankingBillet.Barcode, ch.Payment.BankingBillet.Pix.QRCode, ch.Payment.BankingBillet.Pix.QRCodeImage, "2026-04-01", 150075)
	old, _ := rules.BarcodeFromTypedLine(res.Barcode)
	neu, _ := rules.BarcodeFromTypedLine(ch.Payment.BankingBillet.Barcode)
	if old[19:] != neu[19:] {
		t.Fatalf("free field changed: %s vs %s", old, neu)
	}
	err = e.c.UpdateBillet(ctx, res.ChargeID, "2026-03-09")
	apiErr(t, err, 400, CodeValidation, "/expire_at")
	if err := e.c.ResendBillet(ctx, res.ChargeID, "pagador@example.com"); err != nil {
		t.Fatal(err)
	}
	err = e.c.ResendBillet(ctx, res.ChargeID, "")
	apiErr(t, err, 400, CodeRequired, "/email")
}

func TestBilletValidation(t *testing.T) {
	e := newEnv(t, "")
	one := func(mod func(b *api.BankingBillet), its []api.Item) error {
		b := billet("2026-03-20")
		mod(b)
		if its == nil {
			its = items(1000)
		}
		_, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: its, Payment: api.Payment{BankingBillet: b}})
		return err
	}
	cases := []struct {
		name  string
		mod   func(b *api.BankingBillet)
		items []api.Item
		code  int
		prop  string
	}{
		{"bad pattern", func(b *api.BankingBillet) { b.ExpireAt = "2026-3-20" }, nil, CodeValidation, "/payment/banking_billet/expire_at"},
		{"no such day", func(b *api.BankingBillet) { b.ExpireAt = "2026-02-30" }, nil, CodeValidation, "/payment/banking_billet/expire_at"},
		{"past", func(b *api.BankingBillet) { b.ExpireAt = "2026-03-09" }, nil, CodeValidation, "/payment/banking_billet/expire_at"},
		{"too far", func(b *api.BankingBillet) { b.ExpireAt = "2040-01-01" }, nil, CodeDueTooFar, ""},
		{"five lines", func(b *api.BankingBillet) { b.Message = "a\nb\nc\nd\ne" }, nil, CodeValidation, "/payment/banking_billet/message"},
		{"long line", func(b *api.BankingBillet) { b.Message = strings.Repeat("é", 101) }, nil, CodeValidation, "/payment/banking_billet/message"},
		{"bad cpf", func(b *api.BankingBillet) { b.Customer.CPF = "52998224724" }, nil, CodeValidation, "/payment/banking_billet/customer/cpf"},
		{"no name", func(b *api.BankingBillet) { b.Customer.Name = "" }, nil, CodeValidation, "/payment/banking_billet/customer/name"},
		{"fine", func(b *api.BankingBillet) { b.Configurations = &api.Configurations{Fine: 1001} }, nil, CodeValidation, "/payment/banking_billet/configurations/fine"},
		{"interest", func(b *api.BankingBillet) { b.Configurations = &api.Configurations{Interest: 331} }, nil, CodeValidation, "/payment/banking_billet/configurations/interest"},
		{"below 5", func(b *api.BankingBillet) {}, items(499), CodeMinTotal, ""},
		{"discount type", func(b *api.BankingBillet) { b.Discount = &api.Discount{Type: "x", Value: 1} }, nil, CodeValidation, "/payment/banking_billet/discount/type"},
		{"bad cnpj", func(b *api.BankingBillet) {
			b.Customer.CPF = ""
			b.Customer.JuridicalPerson = &api.JuridicalPerson{CorporateName: "ACME", CNPJ: "11222333000180"}
		}, nil, CodeValidation, "/payment/banking_billet/customer/juridical_person/cnpj"},
		{"bad address", func(b *api.BankingBillet) { a := address(); a.State = "XX"; b.Customer.Address = &a }, nil, CodeValidation, "/payment/banking_billet/customer/address/state"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { apiErr(t, one(c.mod, c.items), 400, c.code, c.prop) })
	}
	// A company payer (alphanumeric CNPJ) is accepted without a CPF.
	err := one(func(b *api.BankingBillet) {
		b.Customer.CPF = ""
		b.Customer.JuridicalPerson = &api.JuridicalPerson{CorporateName: "ACME", CNPJ: "12.ABC.345/01DE-35"}
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

func rawV1(t *testing.T, e *env, method, path, body string) error {
	t.Helper()
	_, err := e.c.Do(ctx, api.V1, method, path, []byte(body))
	return err
}

func TestDecodingErrors(t *testing.T) {
	e := newEnv(t, "")
	cases := []struct{ body, prop string }{
		{`{"items":[{"name":"a","value":100}],"foo":1}`, "/foo"},
		{`{"items":[{"name":"a","value":"100"}]}`, "/items/0/value"},
		{`{"items":[{"name":"a","value":100,"bar":true}]}`, "/items/0/bar"},
		{`{"items":[{"value":100}]}`, "/items/0/name"},
		{`{"items":[{"name":"a"}]}`, "/items/0/value"},
		{`{}`, "/items"},
		{`{"items":[]}`, "/items"},
		{`{"items":[{"name":"` + strings.Repeat("n", 256) + `","value":100}]}`, "/items/0/name"},
		{`{"items":[{"name":"a","value":0}]}`, "/items/0/value"},
		{`{"items":[{"name":"a","value":100,"amount":0}]}`, "/items/0/amount"},
		{`{"items":[{"name":"a","value":100}],"metadata":{"custom_id":5}}`, "/metadata/custom_id"},
		{`{"items":[{"name":"a","value":9999999999,"amount":2}]}`, "/items/0"},
		{`{"items":[{"name":"a","value":9999999999},{"name":"b","value":1}]}`, "/items/1"},
		{`{"items":[{"name":"a","value":100}],"shippings":[{"name":"f"}]}`, "/shippings/0/value"},
		{`{"items":[{"name":"a","value":100,"marketplace":{}}]}`, "/items/0/marketplace/repasses"},
	}
	for _, c := range cases {
		err := rawV1(t, e, "POST", "/v1/charge", c.body)
		apiErr(t, err, 400, CodeValidation, c.prop)
	}
	err := rawV1(t, e, "POST", "/v1/charge", `{"items":`)
	apiErr(t, err, 400, CodeValidation, "")
	err = rawV1(t, e, "GET", "/v1/charge/abc", "")
	apiErr(t, err, 400, CodeValidation, "/id")
	// No token and an expired token: 401.
	resp, herr := e.srv.Client().Get(e.srv.URL + "/v1/charge/1")
	if herr != nil || resp.StatusCode != 401 {
		t.Fatalf("no token: %v %v", resp, herr)
	}
	resp.Body.Close()
	// A token past its 600 s lifetime is refused with 401.
	tok := benchToken(t, e)
	get := func() int {
		req, _ := http.NewRequest("GET", e.srv.URL+"/v1/installments?brand=visa&total=1000", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get(); st != 200 {
		t.Fatalf("fresh token: %d", st)
	}
	e.clk.Advance(601 * time.Second)
	if st := get(); st != 401 {
		t.Fatalf("expired token: %d, want 401", st)
	}
	// The client renews it by itself.
	if _, err := e.c.Installments(ctx, "visa", 1000); err != nil {
		t.Fatal(err)
	}
}

func TestPayTwoStepAndStates(t *testing.T) {
	e := newEnv(t, "")
	cr, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(2000, 3000)})
	if err != nil {
		t.Fatal(err)
	}
	pay, err := e.c.PayCharge(ctx, cr.ChargeID, api.Payment{BankingBillet: billet("2026-03-10")})
	if err != nil {
		t.Fatal(err)
	}
	if pay.Status != "waiting" || pay.Total != 5000 {
		t.Fatalf("pay %+v", pay)
	}
	checkSlip(t, e, pay.Barcode, pay.Pix.QRCode, pay.Pix.QRCodeImage, "2026-03-10", 5000)
	_, err = e.c.PayCharge(ctx, cr.ChargeID, api.Payment{BankingBillet: billet("2026-03-12")})
	apiErr(t, err, 400, CodeAlreadyPaymentForm, "")
	_, err = e.c.PayCharge(ctx, cr.ChargeID, api.Payment{})
	apiErr(t, err, 400, CodeValidation, "/payment/banking_billet")
	// Foreign: exactly like missing.
	_, err = e.c2.PayCharge(ctx, cr.ChargeID, api.Payment{BankingBillet: billet("2026-03-12")})
	apiErr(t, err, 400, CodeNotFound, "id")
	apiErr(t, e.c2.CancelCharge(ctx, cr.ChargeID), 400, CodeNotFound, "id")
	apiErr(t, e.c2.SettleCharge(ctx, cr.ChargeID), 400, CodeNotFound, "id")

	// The day after the due date the slip is unpaid (lazily on read).
	e.clk.Advance(24 * time.Hour)
	ch, _ := e.c.GetCharge(ctx, cr.ChargeID)
	if ch.Status != "unpaid" {
		t.Fatalf("status %s the day after due date, want unpaid", ch.Status)
	}
	apiErr(t, e.c.ResendBillet(ctx, cr.ChargeID, "a@example.com"), 400, CodeResend, "")
	// Settle an unpaid slip; then cancel and settle again are refused.
	if err := e.c.SettleCharge(ctx, cr.ChargeID); err != nil {
		t.Fatal(err)
	}
	apiErr(t, e.c.CancelCharge(ctx, cr.ChargeID), 400, CodeCancel, "")
	apiErr(t, e.c.SettleCharge(ctx, cr.ChargeID), 400, CodeSettle, "")
	ch, _ = e.c.GetCharge(ctx, cr.ChargeID)
	if ch.Status != "settled" {
		t.Fatalf("status %s, want settled", ch.Status)
	}
	// A new charge can be canceled; a canceled one cannot be paid nor settled.
	cr2, _ := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(1000)})
	if err := e.c.CancelCharge(ctx, cr2.ChargeID); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.PayCharge(ctx, cr2.ChargeID, api.Payment{BankingBillet: billet("2026-03-12")})
	apiErr(t, err, 400, CodeCannotPay, "")
	apiErr(t, e.c.SettleCharge(ctx, cr2.ChargeID), 400, CodeSettle, "")
	// A slip printed before the cancellation and paid at a branch: paid.
	os, _ := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000), Payment: api.Payment{BankingBillet: billet("2026-03-20")}})
	if err := e.c.CancelCharge(ctx, os.ChargeID); err != nil {
		t.Fatal(err)
	}
	if err := e.mod.PaySlip(ctx, e.creds.AccountID, os.ChargeID, 1000, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.c.GetCharge(ctx, os.ChargeID)
	if ch.Status != "paid" || ch.Payment.PaidValue != 1000 {
		t.Fatalf("paid after cancel: %+v", ch)
	}
	if err := e.mod.PaySlip(ctx, e.creds.AccountID, os.ChargeID, 1000, e.clk.Now()); err == nil {
		t.Fatal("paid twice")
	}
	if err := e.mod.PaySlip(ctx, e.acc2.ID, os.ChargeID, 1000, e.clk.Now()); err == nil {
		t.Fatal("paid through another account")
	}
}

func TestTickAndNotifications(t *testing.T) {
	e := newEnv(t, "")
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000),
		Metadata: &api.Metadata{CustomID: "t", NotificationURL: "http://127.0.0.1:1/hook"},
		Payment:  api.Payment{BankingBillet: billet("2026-03-11")}})
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimPrefix(e.note.all()[0].body, "notification=")
	e.clk.Advance(24 * time.Hour) // 2026-03-11: still due today
	if err := e.mod.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(e.note.all()); n != 1 {
		t.Fatalf("%d deliveries before the due date passed", n)
	}
	e.clk.Advance(24 * time.Hour) // 2026-03-12
	if err := e.mod.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got := e.note.all()
	if len(got) != 2 || got[1].body != "notification="+tok {
		t.Fatalf("deliveries %+v", got)
	}
	if err := e.mod.PaySlip(ctx, e.creds.AccountID, res.ChargeID, 1050, time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ch, err := e.c.GetNotification(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"new", "waiting", "unpaid", "paid"}
	if len(ch) != len(want) {
		t.Fatalf("changes %+v", ch)
	}
	for i, c := range ch {
		if c.ID != i+1 || c.Status.Current != want[i] || (i > 0 && *c.Status.Previous != want[i-1]) {
			t.Fatalf("change %d: %+v", i, c)
		}
	}
	if last := ch[3]; last.Value == nil || *last.Value != 1050 || last.ReceivedByBankAt != "2026-03-12" {
		t.Fatalf("payment change %+v", last)
	}
	if len(e.note.all()) != 3 {
		t.Fatalf("deliveries %d, want 3", len(e.note.all()))
	}
}

func TestWriteOff(t *testing.T) {
	e := newEnv(t, "")
	zero := int64(0)
	b := billet("2026-03-10")
	b.Configurations = &api.Configurations{DaysToWriteOff: &zero}
	res, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000), Payment: api.Payment{BankingBillet: b}})
	if err != nil {
		t.Fatal(err)
	}
	err = e.mod.PaySlip(ctx, e.creds.AccountID, res.ChargeID, 1000, time.Date(2026, 3, 11, 15, 0, 0, 0, time.UTC))
	if st, code := ErrorStatus(err); st != 400 || code != CodeWrittenOff {
		t.Fatalf("pay after write-off: %v", err)
	}
}

func TestListCharges(t *testing.T) {
	e := newEnv(t, "")
	for i := 0; i < 5; i++ {
		if _, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(1000 + int64(i)),
			Metadata: &api.Metadata{CustomID: fmt.Sprintf("lote-%d", i%2)},
			Payment:  api.Payment{BankingBillet: billet("2026-03-20")}}); err != nil {
			t.Fatal(err)
		}
	}
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: items(3000), Customer: customer(), ExpireAt: "2026-04-05", Repeats: 3,
		Metadata: &api.Metadata{CustomID: "carne-7"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c2.CreateCharge(ctx, api.ChargeRequest{Items: items(1000), Metadata: &api.Metadata{CustomID: "lote-0"}}); err != nil {
		t.Fatal(err)
	}
	q := api.ChargeListQuery{ChargeType: "billet", BeginDate: "2026-03-10", EndDate: "2026-03-10", CustomID: "lote-0"}
	l, err := e.c.ListCharges(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Data) != 3 || l.Params.Pagination.Total != 3 {
		t.Fatalf("list %+v", l)
	}
	q = api.ChargeListQuery{ChargeType: "carnet", BeginDate: "2026-03-01", EndDate: "2026-03-31", CustomID: "carne-7"}
	l, _ = e.c.ListCharges(ctx, q)
	if len(l.Data) != 3 || l.Data[0].ID != cn.Charges[0].ChargeID || l.Data[0].Payment.Carnet.Parcel != 1 {
		t.Fatalf("carnet list %+v", l.Data)
	}
	q = api.ChargeListQuery{ChargeType: "billet", BeginDate: "2026-03-10", EndDate: "2026-03-10", Limit: 2, Page: 3}
	l, _ = e.c.ListCharges(ctx, q)
	if len(l.Data) != 1 || l.Params.Pagination.Offset != 4 {
		t.Fatalf("page 3: %+v", l)
	}
	q = api.ChargeListQuery{ChargeType: "billet", BeginDate: "2026-03-10", EndDate: "2026-03-10", CustomerDocument: "529.982.247-25", Value: ptr(int64(1002))}
	l, _ = e.c.ListCharges(ctx, q)
	if len(l.Data) != 1 || l.Data[0].Total != 1002 {
		t.Fatalf("by document and value: %+v", l.Data)
	}
	q = api.ChargeListQuery{ChargeType: "billet", BeginDate: "2026-03-20", EndDate: "2026-03-20", DateOf: "expired"}
	l, _ = e.c.ListCharges(ctx, q)
	if len(l.Data) != 5 {
		t.Fatalf("by due date: %d", len(l.Data))
	}
	_, err = e.c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "billet", EndDate: "2026-03-10"})
	apiErr(t, err, 400, CodeValidation, "/begin_date")
	_, err = e.c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "boleto", BeginDate: "2026-03-10", EndDate: "2026-03-10"})
	apiErr(t, err, 400, CodeValidation, "/charge_type")
	_, err = e.c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "card", BeginDate: "2026-03-10", EndDate: "2026-03-01"})
	apiErr(t, err, 400, CodeValidation, "/end_date")
	_, err = e.c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "card", BeginDate: "2026-03-10", EndDate: "2026-03-10", Status: "pago"})
	apiErr(t, err, 400, CodeValidation, "/status")
	l, _ = e.c2.ListCharges(ctx, api.ChargeListQuery{ChargeType: "billet", BeginDate: "2026-03-10", EndDate: "2026-03-10"})
	if len(l.Data) != 1 {
		t.Fatalf("second account sees %d charges", len(l.Data))
	}
	_ = url.Values{}
}
