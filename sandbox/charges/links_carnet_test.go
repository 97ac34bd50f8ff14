package charges

import (
	"strings"
	"testing"
	"time"

	"remessa/api"
)

func TestLinks(t *testing.T) {
	e := newEnv(t, "")
	yes := true
	disc := int64(500)
	l, err := e.c.CreateOneStepLink(ctx, api.OneStepLinkRequest{Items: items(10000), Customer: &api.LinkCustomer{Email: "a@example.com"},
		Metadata: &api.Metadata{CustomID: "link-1"},
		Settings: api.LinkSettings{PaymentMethod: "all", ExpireAt: "2026-03-12", Message: "Obrigado", RequestDeliveryAddress: &yes,
			BilletDiscount: &disc, ConditionalDiscount: &api.ConditionalDiscount{Type: "percentage", Value: 500, UntilDate: "2026-03-11"}}})
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != "link" || l.PaymentMethod != "all" || l.BilletDiscount != 500 || !l.RequestDeliveryAddress ||
		*l.ConditionalDiscountType != "percentage" || *l.Message != "Obrigado" || l.ExpireAt != "2026-03-12" ||
		!strings.HasPrefix(l.PaymentURL, e.srv.URL+"/v1/documents/link/") {
		t.Fatalf("link %+v", l)
	}
	// Update with the expire-at spelling of the spec's example.
	err = rawV1(t, e, "PUT", "/v1/charge/"+itoa(int(l.ChargeID))+"/link", `{"expire-at":"2026-03-15","message":"Novo"}`)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := e.c.GetCharge(ctx, l.ChargeID)
	if ch.Link == nil || ch.Link.ExpireAt != "2026-03-15" || *ch.Link.Message != "Novo" || ch.Customer.Email != "a@example.com" {
		t.Fatalf("after update %+v", ch.Link)
	}
	_, err = e.c.UpdateChargeLink(ctx, l.ChargeID, api.LinkSettings{Message: strings.Repeat("m", 81)})
	apiErr(t, err, 400, CodeValidation, "/message")
	_, err = e.c.UpdateChargeLink(ctx, l.ChargeID, api.LinkSettings{PaymentMethod: "pix"})
	apiErr(t, err, 400, CodeValidation, "/payment_method")
	if err := e.c.ResendChargeLink(ctx, l.ChargeID, "b@example.com"); err != nil {
		t.Fatal(err)
	}
	apiErr(t, e.c.ResendChargeLink(ctx, l.ChargeID, "nope"), 400, CodeValidation, "/email")
	apiErr(t, e.c.SettleCharge(ctx, l.ChargeID), 400, CodeSettle, "")
	// Past expire_at the link is expired; an update with a new date revives it.
	e.clk.Advance(6 * 24 * time.Hour) // 2026-03-16
	if err := e.mod.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	ch, _ = e.c.GetCharge(ctx, l.ChargeID)
	if ch.Status != "expired" {
		t.Fatalf("status %s, want expired", ch.Status)
	}
	apiErr(t, e.c.ResendChargeLink(ctx, l.ChargeID, "b@example.com"), 400, CodeResend, "")
	l2, err := e.c.UpdateChargeLink(ctx, l.ChargeID, api.LinkSettings{ExpireAt: "2026-03-20"})
	if err != nil {
		t.Fatal(err)
	}
	if l2.Status != "link" {
		t.Fatalf("revived %+v", l2)
	}
	// Paid through the link: no more updates; cancel refused too.
	if err := e.mod.PaySlip(ctx, e.creds.AccountID, l.ChargeID, 9500, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.UpdateChargeLink(ctx, l.ChargeID, api.LinkSettings{ExpireAt: "2026-03-25"})
	apiErr(t, err, 400, CodeLinkNotUpdatable, "")
	apiErr(t, e.c.CancelCharge(ctx, l.ChargeID), 400, CodeCancel, "")

	// Two-step link from a new charge.
	cr, _ := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(2000)})
	l3, err := e.c.CreateChargeLink(ctx, cr.ChargeID, api.LinkSettings{ExpireAt: "2026-03-30", PaymentMethod: "banking_billet"})
	if err != nil {
		t.Fatal(err)
	}
	if l3.Status != "link" || l3.PaymentMethod != "banking_billet" {
		t.Fatalf("link %+v", l3)
	}
	_, err = e.c.CreateChargeLink(ctx, cr.ChargeID, api.LinkSettings{ExpireAt: "2026-03-30"})
	apiErr(t, err, 400, CodeCannotPay, "")
	_, err = e.c.PayCharge(ctx, cr.ChargeID, api.Payment{BankingBillet: billet("2026-03-30")})
	apiErr(t, err, 400, CodeCannotPay, "")
	cr2, _ := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(2000)})
	_, err = e.c.CreateChargeLink(ctx, cr2.ChargeID, api.LinkSettings{})
	apiErr(t, err, 400, CodeValidation, "/expire_at")
	_, err = e.c.UpdateChargeLink(ctx, cr2.ChargeID, api.LinkSettings{ExpireAt: "2026-03-30"})
	apiErr(t, err, 400, CodeLinkNotUpdatable, "")
	if err := e.c.CancelCharge(ctx, l3.ChargeID); err != nil {
		t.Fatal(err)
	}
	if v, ok := e.mod.LinkDocument(l3.PaymentURL[strings.LastIndex(l3.PaymentURL, "/")+1:]); !ok || v.Link == nil || v.Status != "canceled" {
		t.Fatalf("link document %+v %v", v, ok)
	}
}

func newCarnetReq(expire string, repeats int, values ...int64) api.CarnetRequest {
	return api.CarnetRequest{Items: items(values...), Customer: customer(), ExpireAt: expire, Repeats: repeats,
		Configurations: &api.CarnetConfigurations{Fine: 200, Interest: 33}, Message: "Carnê de teste"}
}

func TestCarnetCreation(t *testing.T) {
	e := newEnv(t, "")
	e.clk.Set(time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC))
	req := newCarnetReq("2027-01-31", 12, 10000)
	req.Metadata = &api.Metadata{CustomID: "c-1", NotificationURL: "https://example.com/n"}
	cn, err := e.c.CreateCarnet(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if cn.Status != "up_to_date" || cn.Repeats != 12 || len(cn.Charges) != 12 || cn.Value != 120000 || cn.CarnetLink == "" ||
		!strings.HasPrefix(cn.Cover, e.srv.URL+"/v1/documents/carnet/") || !strings.HasPrefix(cn.PDF.Carnet, e.srv.URL+"/v1/documents/carnet/") {
		t.Fatalf("carnet %+v", cn)
	}
	// One parcel per month on the day of expire_at, clamped to the month.
	wantDue := []string{"2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31", "2027-06-30",
		"2027-07-31", "2027-08-31", "2027-09-30", "2027-10-31", "2027-11-30", "2027-12-31"}
	seen := map[int64]bool{}
	for i, p := range cn.Charges {
		if int(p.Parcel) != i+1 || p.ExpireAt != wantDue[i] || p.Status != "waiting" || p.Value != 10000 || seen[p.ChargeID] {
			t.Fatalf("parcel %d: %+v", i+1, p)
		}
		seen[p.ChargeID] = true
		checkSlip(t, e, p.Barcode, p.Pix.QRCode, p.Pix.QRCodeImage, wantDue[i], 10000)
		if p.URL == "" || p.ParcelLink != p.URL || p.Configurations.Fine != 200 {
			t.Fatalf("parcel %d links %+v", i+1, p)
		}
	}
	// The query returns integer parcel numbers and each parcel is a charge.
	got, err := e.c.GetCarnet(ctx, cn.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Charges) != 12 || got.Charges[11].Parcel != 12 || *got.CustomID != "c-1" {
		t.Fatalf("query %+v", got)
	}
	pc, err := e.c.GetCharge(ctx, cn.Charges[1].ChargeID)
	if err != nil {
		t.Fatal(err)
	}
	if pc.Payment.Carnet == nil || pc.Payment.Carnet.CarnetID != cn.CarnetID || pc.Payment.Carnet.Parcel != 2 || *pc.CustomID != "c-1" {
		t.Fatalf("parcel charge %+v", pc.Payment)
	}
	// Charge routes that would change a parcel point to the carnet routes.
	apiErr(t, e.c.CancelCharge(ctx, pc.ChargeID), 400, CodeBelongsToCarnet, "")
	apiErr(t, e.c.UpdateChargeMetadata(ctx, pc.ChargeID, api.MetadataUpdate{CustomID: ptr("x")}), 400, CodeBelongsToCarnet, "")
	// split_items divides the total, the remainder on the first parcel.
	req = newCarnetReq("2027-02-01", 3, 10001)
	req.SplitItems = true
	cn2, err := e.c.CreateCarnet(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if cn2.Charges[0].Value != 3335 || cn2.Charges[1].Value != 3333 || cn2.Charges[2].Value != 3333 || cn2.Value != 10001 {
		t.Fatalf("split values %+v", cn2.Charges)
	}
	// Rules.
	_, err = e.c.CreateCarnet(ctx, newCarnetReq("2027-02-01", 1, 1000))
	apiErr(t, err, 400, CodeMinRepeats, "")
	_, err = e.c.CreateCarnet(ctx, newCarnetReq("2027-02-01", 13, 1000))
	apiErr(t, err, 400, CodeMaxRepeats, "")
	bad := newCarnetReq("2027-02-01", 2, 1000)
	bad.Message = strings.Repeat("x", 81)
	_, err = e.c.CreateCarnet(ctx, bad)
	apiErr(t, err, 400, CodeValidation, "/message")
	bad = newCarnetReq("2027/02/01", 2, 1000)
	_, err = e.c.CreateCarnet(ctx, bad)
	apiErr(t, err, 400, CodeValidation, "/expire_at")
	bad = newCarnetReq("2027-02-01", 3, 1000)
	bad.SplitItems = true
	_, err = e.c.CreateCarnet(ctx, bad)
	apiErr(t, err, 400, CodeMinTotal, "")
	err = rawV1(t, e, "POST", "/v1/carnet", `{"items":[{"name":"a","value":1000}],"customer":{"name":"A B","cpf":"52998224725"},"expire_at":"2027-02-01","repeats":2,"configurations":{"days_to_write_off":3}}`)
	apiErr(t, err, 400, CodeValidation, "/configurations/days_to_write_off")
	err = rawV1(t, e, "POST", "/v1/carnet", `{"items":[{"name":"a","value":1000}],"customer":{"name":"A B","cpf":"52998224725"},"expire_at":"2027-02-01"}`)
	apiErr(t, err, 400, CodeValidation, "/repeats")
	// Unknown and foreign carnet ids answer alike.
	_, err = e.c.GetCarnet(ctx, 42)
	apiErr(t, err, 400, CodeNotFound, "id")
	_, err = e.c2.GetCarnet(ctx, cn.CarnetID)
	apiErr(t, err, 400, CodeNotFound, "id")
	// Creation notified: carnet up_to_date then each parcel new and waiting.
	d := e.note.all()
	if len(d) != 1 {
		t.Fatalf("deliveries %+v", d)
	}
	changes, err := e.c.GetNotification(ctx, strings.TrimPrefix(d[0].body, "notification="))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1+24 || changes[0].Type != "carnet" || changes[0].Status.Current != "up_to_date" ||
		changes[2].Type != "carnet_charge" || changes[2].Status.Current != "waiting" || changes[2].Identifiers.CarnetID != cn.CarnetID ||
		changes[2].Identifiers.ChargeID != cn.Charges[0].ChargeID || changes[24].ID != 25 {
		t.Fatalf("changes %+v", changes[:3])
	}
	if v, ok := e.mod.CarnetDocument(cn.Cover[len(e.srv.URL+"/v1/documents/carnet/") : len(cn.Cover)-len("/cover")]); !ok ||
		len(v.Parcels) != 12 || v.Parcels[1].DueDate.Format("2006-01-02") != "2027-02-28" || v.Message != "Carnê de teste" || v.Parcels[0].Repeats != 12 {
		t.Fatalf("carnet document %+v", v)
	}
}

func TestCarnetParcels(t *testing.T) {
	e := newEnv(t, "")
	cn, err := e.c.CreateCarnet(ctx, newCarnetReq("2026-03-15", 4, 5000))
	if err != nil {
		t.Fatal(err)
	}
	id := cn.CarnetID
	// Single parcel due date: later is fine, earlier or today is not.
	if err := e.c.UpdateParcel(ctx, id, 2, "2026-04-20"); err != nil {
		t.Fatal(err)
	}
	got, _ := e.c.GetCarnet(ctx, id)
	if got.Charges[1].ExpireAt != "2026-04-20" {
		t.Fatalf("parcel 2 due %s", got.Charges[1].ExpireAt)
	}
	checkSlip(t, e, got.Charges[1].Barcode, got.Charges[1].Pix.QRCode, got.Charges[1].Pix.QRCodeImage, "2026-04-20", 5000)
	ae := apiErr(t, e.c.UpdateParcel(ctx, id, 2, "2026-04-19"), 400, CodeUpdateParcels, "")
	if !strings.Contains(ae.Description, "Parcela 2") {
		t.Fatalf("description %q does not name the parcel", ae.Description)
	}
	apiErr(t, e.c.UpdateParcel(ctx, id, 1, "2026-03-10"), 400, CodeUpdateParcels, "")
	apiErr(t, e.c.UpdateParcel(ctx, id, 9, "2026-05-10"), 400, CodeNotFound, "parcel")
	apiErr(t, e.c.UpdateParcel(ctx, id, 1, "2026-13-01"), 400, CodeValidation, "/expire_at")
	// Bulk: all or nothing.
	err = e.c.UpdateParcels(ctx, id, []api.ParcelDue{{Parcel: 3, ExpireAt: "2026-05-20"}, {Parcel: 4, ExpireAt: "2026-01-01"}})
	ae = apiErr(t, err, 400, CodeUpdateParcels, "")
	if !strings.Contains(ae.Description, "Parcela 4") {
		t.Fatalf("description %q", ae.Description)
	}
	got, _ = e.c.GetCarnet(ctx, id)
	if got.Charges[2].ExpireAt != "2026-05-15" {
		t.Fatalf("parcel 3 changed by a refused bulk update: %s", got.Charges[2].ExpireAt)
	}
	apiErr(t, e.c.UpdateParcels(ctx, id, []api.ParcelDue{{Parcel: 5, ExpireAt: "2026-09-01"}}), 400, CodeUpdateParcels, "")
	err = rawV1(t, e, "PUT", "/v1/carnet/"+itoa(int(id))+"/parcels", `{"parcels":[{"parcel":3}]}`)
	apiErr(t, err, 400, CodeValidation, "/parcels/0/expire_at")
	err = rawV1(t, e, "PUT", "/v1/carnet/"+itoa(int(id))+"/parcels", `{"parcels":[{"expire_at":"2026-06-01"}]}`)
	apiErr(t, err, 400, CodeValidation, "/parcels/0/parcel")
	err = rawV1(t, e, "PUT", "/v1/carnet/"+itoa(int(id))+"/parcels", `{"parcels":[{"parcel":3,"expire_at":"2026-6-01"}]}`)
	apiErr(t, err, 400, CodeValidation, "/parcels/0/expire_at")
	if err := e.c.UpdateParcels(ctx, id, []api.ParcelDue{{Parcel: 3, ExpireAt: "2026-05-20"}, {Parcel: 4, ExpireAt: "2026-06-20"}}); err != nil {
		t.Fatal(err)
	}
	// Resend, cancel, settle per parcel.
	if err := e.c.ResendParcel(ctx, id, 1, "p@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.ResendCarnet(ctx, id, "p@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.CancelParcel(ctx, id, 4); err != nil {
		t.Fatal(err)
	}
	apiErr(t, e.c.CancelParcel(ctx, id, 4), 400, CodeCancel, "")
	apiErr(t, e.c.SettleParcel(ctx, id, 4), 400, CodeSettle, "")
	apiErr(t, e.c.ResendParcel(ctx, id, 4, "p@example.com"), 400, CodeResend, "")
	apiErr(t, e.c.UpdateParcel(ctx, id, 4, "2026-08-01"), 400, CodeUpdateParcels, "")
	if err := e.c.SettleParcel(ctx, id, 3); err != nil {
		t.Fatal(err)
	}
	// Parcel 1 overdue: carnet unpaid; due date change brings it back.
	e.clk.Set(time.Date(2026, 3, 16, 15, 0, 0, 0, time.UTC))
	got, _ = e.c.GetCarnet(ctx, id)
	if got.Status != "unpaid" || got.Charges[0].Status != "unpaid" || got.Charges[1].Status != "waiting" {
		t.Fatalf("after due date: %s %s %s", got.Status, got.Charges[0].Status, got.Charges[1].Status)
	}
	if err := e.c.UpdateParcel(ctx, id, 1, "2026-03-20"); err != nil {
		t.Fatal(err)
	}
	got, _ = e.c.GetCarnet(ctx, id)
	if got.Status != "up_to_date" || got.Charges[0].Status != "waiting" {
		t.Fatalf("after new due date: %s %s", got.Status, got.Charges[0].Status)
	}
	if err := e.c.AddCarnetHistory(ctx, id, "Cliente avisado"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.UpdateCarnetMetadata(ctx, id, api.MetadataUpdate{CustomID: ptr("novo")}); err != nil {
		t.Fatal(err)
	}
	// Settle the rest: finished; then cancel, settle and resend are refused.
	if err := e.c.SettleCarnet(ctx, id); err != nil {
		t.Fatal(err)
	}
	got, _ = e.c.GetCarnet(ctx, id)
	if got.Status != "finished" || *got.CustomID != "novo" || got.History[len(got.History)-2].Message != "Cliente avisado" {
		t.Fatalf("finished? %+v", got)
	}
	apiErr(t, e.c.CancelCarnet(ctx, id), 400, CodeCarnetFinished, "")
	apiErr(t, e.c.SettleCarnet(ctx, id), 400, CodeCarnetFinished, "")
	apiErr(t, e.c.ResendCarnet(ctx, id, "p@example.com"), 400, CodeResend, "")
	// Cancel a whole carnet.
	cn2, _ := e.c.CreateCarnet(ctx, newCarnetReq("2026-04-01", 2, 5000))
	if err := e.c.CancelCarnet(ctx, cn2.CarnetID); err != nil {
		t.Fatal(err)
	}
	got, _ = e.c.GetCarnet(ctx, cn2.CarnetID)
	if got.Status != "canceled" || got.Charges[0].Status != "canceled" {
		t.Fatalf("canceled carnet %+v", got)
	}
	apiErr(t, e.c2.CancelCarnet(ctx, cn2.CarnetID), 400, CodeNotFound, "id")
	// Paying a parcel through the control export.
	cn3, _ := e.c.CreateCarnet(ctx, newCarnetReq("2026-04-01", 2, 5000))
	if err := e.mod.PaySlip(ctx, e.creds.AccountID, cn3.Charges[0].ChargeID, 5000, e.clk.Now()); err != nil {
		t.Fatal(err)
	}
	got, _ = e.c.GetCarnet(ctx, cn3.CarnetID)
	if got.Charges[0].Status != "paid" || got.Status != "up_to_date" {
		t.Fatalf("after payment %+v", got)
	}
}

func TestMarketplace(t *testing.T) {
	e := newEnv(t, "")
	other := strings.Repeat("ab", 16)
	third := strings.Repeat("cd", 16)
	split := func(rs ...api.Repasse) []api.Item {
		return []api.Item{{Name: "Produto", Value: 10000, Amount: 1, Marketplace: &api.Marketplace{Repasses: rs}}}
	}
	// Valid: percentage below 100%, mixed with a plain item and a shipping to another account.
	its := append(split(api.Repasse{PayeeCode: other, Percentage: 2500}), api.Item{Name: "Outro", Value: 500})
	if _, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: its, Shippings: []api.Shipping{{Name: "Frete", Value: 1000, PayeeCode: third}}}); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: split(api.Repasse{PayeeCode: other, Percentage: 6000}, api.Repasse{PayeeCode: third, Percentage: 4001})})
	ae := apiErr(t, err, 400, CodeRepasses, "")
	if !strings.Contains(ae.Description, "Erro ao mapear repasses") {
		t.Fatalf("description %q", ae.Description)
	}
	_, err = e.c.CreateCharge(ctx, api.ChargeRequest{Items: split(api.Repasse{PayeeCode: other, Percentage: 1000}, api.Repasse{PayeeCode: other, Percentage: 1000})})
	apiErr(t, err, 400, CodeDuplicatePayee, "")
	_, err = e.c.CreateCharge(ctx, api.ChargeRequest{Items: split(api.Repasse{PayeeCode: other, Fixed: 1000})})
	apiErr(t, err, 400, CodeRepasses, "") // fixed needs mode 1
	it := split(api.Repasse{PayeeCode: other, Fixed: 10001})
	it[0].Marketplace.Mode = 1
	_, err = e.c.CreateCharge(ctx, api.ChargeRequest{Items: it})
	apiErr(t, err, 400, CodeRepasses, "") // above the item total
	it[0].Marketplace.Repasses[0].Fixed = 10000
	if _, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: it}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.CreateCharge(ctx, api.ChargeRequest{Items: split(api.Repasse{PayeeCode: "xyz", Percentage: 1000})})
	apiErr(t, err, 400, CodeValidation, "/items/0/marketplace/repasses/0/payee_code")
	_, err = e.c.CreateCharge(ctx, api.ChargeRequest{Items: split(api.Repasse{PayeeCode: e.creds.PayeeCode, Percentage: 1000})})
	apiErr(t, err, 400, CodeValidation, "/items/0/marketplace/repasses/0/payee_code")
	err = rawV1(t, e, "POST", "/v1/charge", `{"items":[{"name":"a","value":1000,"marketplace":{"repasses":[{"payee_code":"`+other+`","percentage":0}]}}]}`)
	apiErr(t, err, 400, CodeRepasses, "")
	// No discount on a split charge.
	b := billet("2026-03-20")
	b.Discount = &api.Discount{Type: "currency", Value: 100}
	_, err = e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: split(api.Repasse{PayeeCode: other, Percentage: 1000}), Payment: api.Payment{BankingBillet: b}})
	apiErr(t, err, 400, CodeDiscountSplit, "")
	// Carnets too.
	req := newCarnetReq("2026-04-01", 2, 1000)
	req.Items = split(api.Repasse{PayeeCode: other, Percentage: 10001})
	_, err = e.c.CreateCarnet(ctx, req)
	apiErr(t, err, 400, CodeRepasses, "")
}
