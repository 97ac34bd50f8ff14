package control_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"remessa/api"
	"remessa/sandbox/control"
)

// TestCarnetPaidPartlyThenOverdue pays two of three parcels (one late, with
// a different value and date, as a bank may report), moves the clock past
// the third's due date, and reads through api/ the statuses, the history
// and the notifications that followed.
func TestCarnetPaidPartlyThenOverdue(t *testing.T) {
	e := newEnv(t, "")
	rc := newReceiver(t)
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{
		Items:    []api.Item{{Name: "Mensalidade escolar", Value: 35000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 3,
		Metadata: &api.Metadata{NotificationURL: rc.URL + "/carne", CustomID: "carne-42"},
		Message:  "Anuidade 2026",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cn.Charges) != 3 {
		t.Fatalf("carnet has %d parcels", len(cn.Charges))
	}
	wantDue := []string{"2026-03-10", "2026-04-10", "2026-05-10"}
	for i, p := range cn.Charges {
		if p.ExpireAt != wantDue[i] || p.Status != "waiting" {
			t.Fatalf("parcel %d: %+v", i+1, p)
		}
	}
	e.runDue()

	// Parcel 1 paid the day before its due date, reported on the due date.
	e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-03-10"}, nil)
	var pay control.PayResult
	if st := e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/1/pay", map[string]any{"paid_at": "2026-03-09"}, &pay); st != 200 {
		t.Fatalf("pay parcel 1: %d", st)
	}
	if pay.ChargeID != cn.Charges[0].ChargeID || pay.Parcel != 1 || pay.Value != 35000 || pay.CarnetID != cn.CarnetID {
		t.Fatalf("pay parcel 1 result %+v", pay)
	}
	e.runDue()
	// Parcel 2 (due 2026-04-10) goes unpaid on 04-11 and is paid late on
	// 04-12 by its charge id, R$ 1,50 more (late fee as the bank reports it).
	e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-04-13"}, nil)
	if st := e.control("POST", "/sandbox/charges/"+itoa(cn.Charges[1].ChargeID)+"/pay",
		map[string]any{"value": 35150, "paid_at": "2026-04-12"}, nil); st != 200 {
		t.Fatalf("pay parcel 2: %d", st)
	}
	e.runDue()
	// Move to 2026-05-12: parcel 3 (due 2026-05-10) is now overdue.
	var s control.ClockState
	if st := e.control("POST", "/sandbox/clock/advance", map[string]string{"to": "2026-05-12"}, &s); st != 200 {
		t.Fatalf("advance: %d", st)
	}
	if s.Today != "2026-05-12" {
		t.Fatalf("today after advance = %s", s.Today)
	}

	got, err := e.c.GetCarnet(ctx, cn.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := []string{"paid", "paid", "unpaid"}
	for i, p := range got.Charges {
		if p.Status != wantStatus[i] {
			t.Errorf("parcel %d status %s, want %s", i+1, p.Status, wantStatus[i])
		}
	}
	if got.Status != "unpaid" {
		t.Errorf("carnet status %s, want unpaid (a parcel is overdue)", got.Status)
	}
	// History of the parcels through GET /v1/charge/:id.
	p1, err := e.c.GetCharge(ctx, cn.Charges[0].ChargeID)
	if err != nil {
		t.Fatal(err)
	}
	if !historyHas(p1.History, "R$ 350,00") {
		t.Errorf("parcel 1 history lacks the paid value R$ 350,00: %+v", p1.History)
	}
	p2, _ := e.c.GetCharge(ctx, cn.Charges[1].ChargeID)
	if p2 == nil || !historyHas(p2.History, "R$ 351,50") {
		t.Errorf("parcel 2 history lacks the reported value R$ 351,50: %+v", p2)
	}
	p3, _ := e.c.GetCharge(ctx, cn.Charges[2].ChargeID)
	if p3 == nil || p3.Status != "unpaid" || len(p3.History) < 2 {
		t.Errorf("parcel 3: %+v", p3)
	}

	// Notifications: one stable token for the carnet, and its changes in order.
	toks := rc.got()
	if len(toks) < 3 {
		t.Fatalf("receiver got %d notifications, want at least 3 (two payments, one overdue)", len(toks))
	}
	for _, tk := range toks {
		if tk != toks[0] {
			t.Fatalf("tokens %v: the carnet's token must be stable", toks)
		}
	}
	changes := e.changesOf(toks[0])
	var paid1, paid2, overdue, carnetUnpaid int
	for i, c := range changes {
		if c.Identifiers.CarnetID != cn.CarnetID {
			t.Errorf("change %d is about carnet %d", c.ID, c.Identifiers.CarnetID)
		}
		switch {
		case c.Type == "carnet_charge" && c.Identifiers.ChargeID == cn.Charges[0].ChargeID && c.Status.Current == "paid":
			paid1 = i + 1
			if c.Value == nil || *c.Value != 35000 || c.ReceivedByBankAt != "2026-03-09" || prev(c) != "waiting" {
				t.Errorf("parcel 1 paid change %+v", c)
			}
		case c.Type == "carnet_charge" && c.Identifiers.ChargeID == cn.Charges[1].ChargeID && c.Status.Current == "paid":
			paid2 = i + 1
			if c.Value == nil || *c.Value != 35150 || c.ReceivedByBankAt != "2026-04-12" || prev(c) != "unpaid" {
				t.Errorf("parcel 2 paid change %+v", c)
			}
		case c.Type == "carnet_charge" && c.Identifiers.ChargeID == cn.Charges[2].ChargeID && c.Status.Current == "unpaid":
			overdue = i + 1
			if prev(c) != "waiting" || c.Value != nil {
				t.Errorf("parcel 3 overdue change %+v", c)
			}
		case c.Type == "carnet" && c.Status.Current == "unpaid":
			carnetUnpaid = i + 1
		}
	}
	if paid1 == 0 || paid2 == 0 || overdue == 0 {
		t.Fatalf("changes %+v: missing parcel 1 paid (%d), parcel 2 paid (%d) or parcel 3 unpaid (%d)", changes, paid1, paid2, overdue)
	}
	if !(paid1 < paid2 && paid2 < overdue) {
		t.Errorf("changes out of event order: paid1 %d, paid2 %d, overdue %d", paid1, paid2, overdue)
	}
	if carnetUnpaid != 0 && carnetUnpaid < overdue {
		t.Errorf("carnet went unpaid (change %d) before its parcel (change %d)", carnetUnpaid, overdue)
	}
	pending, _ := e.ob.Pending(ctx)
	if len(pending) != 0 {
		t.Errorf("%d notifications still pending", len(pending))
	}
}

func historyHas(h []api.History, s string) bool {
	for _, x := range h {
		if strings.Contains(x.Message, s) {
			return true
		}
	}
	return false
}

func TestCarnetDocumentLinks(t *testing.T) {
	e := newEnv(t, "")
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Mensalidade", Value: 35000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 4, Message: "Anuidade 2026"})
	if err != nil {
		t.Fatal(err)
	}
	e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/1/pay", nil, nil)
	// Every link kind of the carnet answer: the pdf ones a PDF, the others a
	// printable HTML page.
	links := []struct {
		name, url string
		pdf       bool
	}{
		{"pdf.carnet", cn.PDF.Carnet, true}, {"pdf.cover", cn.PDF.Cover, true}, {"cover", cn.Cover, false},
		{"link", cn.Link, false}, {"charges[1].url", cn.Charges[1].URL, false}, {"charges[1].pdf.charge", cn.Charges[1].PDF.Charge, true},
	}
	for _, l := range links {
		if l.url == "" {
			t.Fatalf("carnet answer has no %s: %+v", l.name, cn)
		}
		resp, err := http.Get(l.url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s (%s): %d", l.url, l.name, resp.StatusCode)
		}
		if l.pdf && (ct != "application/pdf" || !strings.HasPrefix(string(b), "%PDF-")) {
			t.Errorf("%s answered %s %.10q, want a PDF", l.name, ct, b)
		}
		if !l.pdf && (!strings.HasPrefix(ct, "text/html") || !strings.Contains(string(b), "<!DOCTYPE html>") || !strings.Contains(strings.ToLower(string(b)), "carnê")) {
			t.Errorf("%s answered %s %.40q, want an HTML page about the carnet", l.name, ct, b)
		}
		if l.name == "pdf.carnet" {
			if dir := os.Getenv("REMESSA_SAMPLE_DIR"); dir != "" {
				os.WriteFile(dir+"/sandbox-carnet.pdf", b, 0o644)
			}
		}
	}
}

func TestCarnetMetadataChangeRedirects(t *testing.T) {
	e := newEnv(t, "")
	a, b := newReceiver(t), newReceiver(t)
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Curso", Value: 10000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 2, Metadata: &api.Metadata{NotificationURL: a.URL}})
	if err != nil {
		t.Fatal(err)
	}
	e.runDue()
	before := len(a.got())
	nb := b.URL
	if err := e.c.UpdateCarnetMetadata(ctx, cn.CarnetID, api.MetadataUpdate{NotificationURL: &nb}); err != nil {
		t.Fatal(err)
	}
	e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/2/pay", nil, nil)
	e.runDue()
	if len(a.got()) != before || len(b.got()) == 0 {
		t.Fatalf("after the change: old URL +%d posts, new URL %d posts", len(a.got())-before, len(b.got()))
	}
	c := last(e.changesOf(b.got()[0]))
	if c.Type != "carnet_charge" || c.Identifiers.ChargeID != cn.Charges[1].ChargeID || c.Status.Current != "paid" {
		t.Fatalf("change at the new URL: %+v", c)
	}
}
