package control_test

import (
	"testing"

	"remessa/api"
	"remessa/sandbox/control"
)

// TestResendsListed: each resend the service accepted is listed by GET
// /sandbox/resends, in order, with the sandbox's clock; a refused resend
// (a paid parcel) is not; ?after= pages and a bad after is a 400.
func TestResendsListed(t *testing.T) {
	e := newEnv(t, "")
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{
		Items:    []api.Item{{Name: "Mensalidade escolar", Value: 35000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.ResendParcel(ctx, cn.CarnetID, 2, "pai@example.com"); err != nil {
		t.Fatal(err)
	}
	if st := e.control("POST", "/sandbox/carnets/"+itoa(cn.CarnetID)+"/parcels/1/pay", map[string]any{}, nil); st != 200 {
		t.Fatalf("pay parcel 1: %d", st)
	}
	if err := e.c.ResendParcel(ctx, cn.CarnetID, 1, "pai@example.com"); err == nil {
		t.Fatal("the resend of a paid parcel was accepted")
	}
	if err := e.c.ResendCarnet(ctx, cn.CarnetID, "mae@example.com"); err != nil {
		t.Fatal(err)
	}
	var a control.ResendsAnswer
	if st := e.control("GET", "/sandbox/resends", nil, &a); st != 200 || len(a.Resends) != 2 {
		t.Fatalf("GET /sandbox/resends: %d %+v", st, a)
	}
	r0, r1 := a.Resends[0], a.Resends[1]
	if r0.Route != "parcel" || r0.Email != "pai@example.com" || r0.Parcel != 2 || r0.CarnetID != cn.CarnetID || r0.ChargeID != cn.Charges[1].ChargeID ||
		r0.At != "2026-03-02T13:00:00Z" || r1.Route != "carnet" || r1.Email != "mae@example.com" || r1.Seq <= r0.Seq {
		t.Errorf("resends: %+v", a.Resends)
	}
	a = control.ResendsAnswer{}
	if st := e.control("GET", "/sandbox/resends?after="+itoa(r0.Seq), nil, &a); st != 200 || len(a.Resends) != 1 || a.Resends[0].Seq != r1.Seq {
		t.Errorf("after %d: %d %+v", r0.Seq, st, a.Resends)
	}
	if st := e.control("GET", "/sandbox/resends?after=ontem", nil, nil); st != 400 {
		t.Errorf("after=ontem: %d, want 400", st)
	}
}
