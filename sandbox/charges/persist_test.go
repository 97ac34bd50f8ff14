package charges

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/module"
	"remessa/sandbox/store"
)

func TestConcurrentCreationsGetDistinctIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := newEnv(t, path)
	const n = 16
	ids := make(chan int64, 2*n)
	errs := make(chan error, 2*n)
	for i := 0; i < n; i++ {
		go func() {
			cr, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(1000)})
			if err != nil {
				errs <- err
				return
			}
			ids <- cr.ChargeID
		}()
		go func() {
			cn, err := e.c.CreateCarnet(ctx, newCarnetReq("2026-04-01", 2, 1000))
			if err != nil {
				errs <- err
				return
			}
			ids <- cn.Charges[0].ChargeID
			ids <- cn.Charges[1].ChargeID
		}()
	}
	seen := map[int64]bool{}
	for len(seen) < 3*n {
		select {
		case err := <-errs:
			t.Fatal(err)
		case id := <-ids:
			if seen[id] {
				t.Fatalf("charge id %d given twice", id)
			}
			seen[id] = true
		}
	}
	e.close()
	e2 := newEnv(t, path)
	for id := range seen {
		if _, err := e2.c.GetCharge(ctx, id); err != nil {
			t.Fatalf("charge %d lost: %v", id, err)
		}
	}
}

func TestRestartKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := newEnv(t, path)
	cr, _ := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(1234), Metadata: &api.Metadata{CustomID: "r1"}})
	os, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(5000), Payment: api.Payment{BankingBillet: billet("2026-03-20")}})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := e.c.CreateCarnet(ctx, newCarnetReq("2026-04-01", 3, 2000))
	if err != nil {
		t.Fatal(err)
	}
	reuse := testCard("4012001038443335")
	reuse.Reuse = false
	tok, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, reuse)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.c.SettleParcel(ctx, cn.CarnetID, 2); err != nil {
		t.Fatal(err)
	}
	lk, err := e.c.CreateOneStepLink(ctx, api.OneStepLinkRequest{Items: items(4000), Settings: api.LinkSettings{ExpireAt: "2026-03-25"}})
	if err != nil {
		t.Fatal(err)
	}
	cardTok, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443335"))
	if err != nil {
		t.Fatal(err)
	}
	card, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(6000), Payment: cardPayment(cardTok.PaymentToken, 2)})
	if err != nil {
		t.Fatal(err)
	}
	before := map[int64]*api.Charge{}
	for _, id := range []int64{cr.ChargeID, os.ChargeID, cn.Charges[0].ChargeID, cn.Charges[1].ChargeID, cn.Charges[2].ChargeID, lk.ChargeID, card.ChargeID} {
		if before[id], err = e.c.GetCharge(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	cb, _ := e.c.GetCarnet(ctx, cn.CarnetID)
	jcb, _ := json.Marshal(cb)
	pub := e.mod.pubKey(e.creds.AccountID)
	e.close()

	e2 := newEnv(t, path)
	for id, b := range before {
		a, err := e2.c.GetCharge(ctx, id)
		if err != nil {
			t.Fatalf("charge %d after restart: %v", id, err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		// Links carry the (new) server address; compare without it.
		sa := strings.ReplaceAll(string(ja), e2.srv.URL, "BASE")
		sb := strings.ReplaceAll(string(jb), e.srvURL(), "BASE")
		if sa != sb {
			t.Fatalf("charge %d differs after restart:\n%s\n%s", id, sb, sa)
		}
	}
	ca, err := e2.c.GetCarnet(ctx, cn.CarnetID)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Status != cb.Status || len(ca.Charges) != 3 || ca.Charges[1].Status != "settled" || ca.Charges[0].Barcode != cb.Charges[0].Barcode {
		t.Fatalf("carnet after restart %+v", ca)
	}
	jca, _ := json.Marshal(ca)
	if a, b := strings.ReplaceAll(string(jca), e2.srv.URL, "BASE"), strings.ReplaceAll(string(jcb), e.srvURL(), "BASE"); a != b {
		t.Fatalf("carnet differs after restart:\n%s\n%s", b, a)
	}
	// New ids do not collide with old ones.
	cr2, _ := e2.c.CreateCharge(ctx, api.ChargeRequest{Items: items(1000)})
	if cr2.ChargeID <= cn.Charges[2].ChargeID {
		t.Fatalf("new id %d not above %d", cr2.ChargeID, cn.Charges[2].ChargeID)
	}
	cn2, _ := e2.c.CreateCarnet(ctx, newCarnetReq("2026-04-01", 2, 2000))
	if cn2.CarnetID <= cn.CarnetID {
		t.Fatalf("new carnet id %d", cn2.CarnetID)
	}
	// The card key and tokens survive too.
	if e2.mod.pubKey(e.creds.AccountID) != pub {
		t.Fatal("tokenization key changed")
	}
	if _, err := e2.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(5000), Payment: cardPayment(tok.PaymentToken, 1)}); err != nil {
		t.Fatal(err)
	}
	_, err = e2.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(5000), Payment: cardPayment(tok.PaymentToken, 1)})
	apiErr(t, err, 400, CodeTokenUsed, "")
	// Lists still find by custom_id.
	l, _ := e2.c.ListCharges(ctx, api.ChargeListQuery{ChargeType: "billet", BeginDate: "2026-03-10", EndDate: "2026-03-10", CustomID: "r1"})
	if len(l.Data) != 1 || l.Data[0].ID != cr.ChargeID {
		t.Fatalf("list after restart %+v", l.Data)
	}
}

// fuzzHandler is the module's mux without auth: the principal is put in
// the context directly, so the fuzzer exercises decoding and validation.
func fuzzHandler(tb testing.TB) (http.Handler, *auth.Principal) {
	st, err := store.Open(store.Memory)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	m, err := New(module.Deps{Store: st, Clock: clock.NewFake(t0), Logger: zerolog.Nop()})
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	m.Register(mux)
	p := &auth.Principal{AccountID: "acc-fuzz", PayeeCode: strings.Repeat("f", 32), Name: "Fuzz LTDA"}
	return mux, p
}

func fuzzOnce(t *testing.T, h http.Handler, p *auth.Principal, method, path string, body []byte) {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req = req.WithContext(auth.WithPrincipal(req.Context(), p))
	rec := httptest.NewRecorder()
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic on %s %q: %v", path, body, r)
			}
		}()
		h.ServeHTTP(rec, req)
	}()
	if rec.Code >= 500 {
		t.Fatalf("%s %q: status %d %s", path, body, rec.Code, rec.Body)
	}
	if rec.Code != 200 {
		var eb struct {
			Code  int    `json:"code"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Code == 0 || eb.Error == "" {
			t.Fatalf("%s %q: error body %s", path, body, rec.Body)
		}
	}
}

var fuzzSeeds = []string{
	`{"items":[{"name":"a","value":1000}]}`,
	`{"items":[{"name":"a","value":1000,"amount":2,"marketplace":{"mode":1,"repasses":[{"payee_code":"abababababababababababababababab","fixed":500}]}}],"shippings":[{"name":"f","value":100,"payee_code":"cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"}],"metadata":{"custom_id":"x","notification_url":"https://a.b/c"}}`,
	`{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":{"name":"A B","cpf":"52998224725"},"expire_at":"2026-03-20","message":"a\nb","configurations":{"fine":200,"interest":33,"days_to_write_off":2},"discount":{"type":"percentage","value":500},"conditional_discount":{"type":"currency","value":100,"until_date":"2026-03-15"}}}}`,
	`{"items":[{"name":"a","value":1000}],"payment":{"credit_card":{"customer":{"name":"A B","cpf":"52998224725","email":"a@b.co","birth":"1990-01-01","phone_number":"11987654321"},"installments":2,"payment_token":"abc","billing_address":{"street":"R","number":"1","neighborhood":"B","zipcode":"01001000","city":"SP","state":"SP"}}}}`,
	`{"items":[{"name":"a","value":9999999999,"amount":100000}]}`,
	`{"items":[{"name":"a","value":-1}],"payment":{}}`,
	`{"items":[{"name":"a","value":1000}],"customer":{"name":"A B","cpf":"52998224725","juridical_person":{"corporate_name":"X","cnpj":"12ABC34501DE35"}},"expire_at":"2026-03-31","repeats":12,"split_items":true,"message":"m"}`,
	`{"items":[{"name":"a","value":1000}],"customer":{"name":"A B","cpf":"52998224725"},"expire_at":"2026-03-31","repeats":1e3}`,
	`[]`, `null`, `{"items":null}`, `{"items":[null]}`, ``, `{"items":[{"name":"\u0000","value":1}]}`,
}

func FuzzChargeCreate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	h, p := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) { fuzzOnce(t, h, p, "POST", "/v1/charge", body) })
}

func FuzzOneStep(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	h, p := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzOnce(t, h, p, "POST", "/v1/charge/one-step", body)
		fuzzOnce(t, h, p, "POST", "/v1/charge/one-step/link", body)
	})
}

func FuzzCarnetCreate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	h, p := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) { fuzzOnce(t, h, p, "POST", "/v1/carnet", body) })
}
