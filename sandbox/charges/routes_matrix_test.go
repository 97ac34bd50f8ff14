package charges

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/api"
)

// badInput is one refused request of a route: the body sent and what the
// answer must be (400 with code and, for 3500034, the JSON pointer).
type badInput struct {
	kind, body string
	code       int
	prop       string
}

// routeMatrix is one charges API route with its generic refusals.
type routeMatrix struct {
	method, path string // path, {id} standing for rid
	tmpl         string
	valid        string // a valid body, sent by the foreign and token checks
	bad          []badInput
	rid          int64 // the resource named in path by {id}: another account must see it as missing
}

var long300 = strings.Repeat("x", 300)

// TestEveryRouteRefusesBadInput sends, through api.Client, to every
// authenticated route of the charges API: unknown properties, wrong JSON
// types, missing properties, oversize strings, broken JSON, another
// account's ids, bad path ids, no token and an expired token. Each answer
// must be the documented error (never a 5xx).
func TestEveryRouteRefusesBadInput(t *testing.T) {
	e := newEnv(t, "")
	chNew, err := e.c.CreateCharge(ctx, api.ChargeRequest{Items: items(2000)})
	if err != nil {
		t.Fatal(err)
	}
	slip, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(3000), Payment: api.Payment{BankingBillet: billet("2026-03-20")}})
	if err != nil {
		t.Fatal(err)
	}
	link, err := e.c.CreateOneStepLink(ctx, api.OneStepLinkRequest{Items: items(3000), Settings: api.LinkSettings{ExpireAt: "2026-03-25", PaymentMethod: "all"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.c.PaymentToken(ctx, e.creds.PayeeCode, testCard("4012001038443331")) // refused: unpaid
	if err != nil {
		t.Fatal(err)
	}
	refused, err := e.c.CreateOneStepCharge(ctx, api.OneStepRequest{Items: items(3000), Payment: cardPayment(tok.PaymentToken, 1)})
	if err != nil || refused.Status != "unpaid" {
		t.Fatalf("refused card charge %+v %v", refused, err)
	}
	cn, err := e.c.CreateCarnet(ctx, newCarnetReq("2026-04-10", 3, 5000))
	if err != nil {
		t.Fatal(err)
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	ch := func(rest string) string { return "/v1/charge/{id}" + rest }
	carnet := "/v1/carnet/{id}"
	cust := `{"name":"Gorbadoc Oldbuck","cpf":"52998224725"}`
	addr := `{"street":"Rua A","number":"1","neighborhood":"Centro","zipcode":"01001000","city":"São Paulo","state":"SP"}`
	slipBody := `{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":"2026-03-20"}}}`
	unknown := func(valid string) badInput {
		return badInput{"unknown property", strings.TrimSuffix(valid, "}") + `,"zzz":1}`, CodeValidation, "/zzz"}
	}
	broken := badInput{"broken JSON", `{"a":`, CodeValidation, ""}
	notObject := badInput{"not an object", `[1,2]`, CodeValidation, ""}
	emailBad := func(valid string) []badInput {
		return []badInput{unknown(valid), broken, notObject,
			{"wrong type", `{"email":42}`, CodeValidation, "/email"},
			{"missing", `{}`, CodeRequired, "/email"},
			{"oversize", `{"email":"` + long300 + `@example.com"}`, CodeValidation, "/email"},
		}
	}
	historyBad := func(valid string) []badInput {
		return []badInput{unknown(valid), broken, notObject,
			{"wrong type", `{"description":["a"]}`, CodeValidation, "/description"},
			{"missing", `{}`, CodeValidation, "/description"},
			{"oversize", `{"description":"` + strings.Repeat("é", 256) + `"}`, CodeValidation, "/description"},
		}
	}
	metadataBad := func(valid string) []badInput {
		return []badInput{unknown(valid), broken, notObject,
			{"wrong type", `{"custom_id":1}`, CodeValidation, "/custom_id"},
			{"oversize", `{"custom_id":"` + strings.Repeat("c", 256) + `"}`, CodeValidation, "/custom_id"},
			{"oversize url", `{"notification_url":"https://example.com/` + long300 + `"}`, CodeValidation, "/notification_url"},
		}
	}
	expireBad := func(valid string) []badInput {
		return []badInput{unknown(valid), broken, notObject,
			{"wrong type", `{"expire_at":20260401}`, CodeValidation, "/expire_at"},
			{"missing", `{}`, CodeValidation, "/expire_at"},
			{"oversize", `{"expire_at":"` + long300 + `"}`, CodeValidation, "/expire_at"},
		}
	}
	linkValid := `{"expire_at":"2026-03-30","payment_method":"all"}`
	linkBad := []badInput{unknown(linkValid), broken, notObject,
		{"wrong type", `{"expire_at":"2026-03-30","request_delivery_address":"yes"}`, CodeValidation, "/request_delivery_address"},
		{"oversize", `{"expire_at":"2026-03-30","message":"` + strings.Repeat("m", 81) + `"}`, CodeValidation, "/message"},
	}
	cardCust := `{"name":"Gorbadoc Oldbuck","cpf":"52998224725","email":"g@example.com","phone_number":"5144916523","birth":"1977-01-15"}`
	cardValid := `{"payment":{"credit_card":{"customer":` + cardCust + `,"billing_address":` + addr + `,"payment_token":"` + strings.Repeat("a", 40) + `"}}}`
	routes := []routeMatrix{
		{method: "POST", path: "/v1/charge", valid: `{"items":[{"name":"a","value":1000}]}`, bad: []badInput{
			unknown(`{"items":[{"name":"a","value":1000}]}`), broken, notObject,
			{"wrong type", `{"items":{"name":"a"}}`, CodeValidation, "/items"},
			{"missing", `{"shippings":[]}`, CodeValidation, "/items"},
			{"oversize", `{"items":[{"name":"` + strings.Repeat("n", 256) + `","value":1000}]}`, CodeValidation, "/items/0/name"},
		}},
		{method: "POST", path: "/v1/charge/one-step", valid: slipBody, bad: []badInput{
			unknown(slipBody), broken, notObject,
			{"wrong type", `{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":true}}}`, CodeValidation, "/payment/banking_billet/expire_at"},
			{"missing", `{"items":[{"name":"a","value":1000}]}`, CodeValidation, "/payment"},
			{"oversize", `{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":{"name":"` + strings.Repeat("n", 256) + `","cpf":"52998224725"},"expire_at":"2026-03-20"}}}`, CodeValidation, "/payment/banking_billet/customer/name"},
		}},
		{method: "POST", path: "/v1/charge/one-step/link", valid: `{"items":[{"name":"a","value":1000}],"settings":{"expire_at":"2026-03-30"}}`, bad: []badInput{
			unknown(`{"items":[{"name":"a","value":1000}],"settings":{"expire_at":"2026-03-30"}}`), broken, notObject,
			{"wrong type", `{"items":[{"name":"a","value":1000}],"settings":{"expire_at":"2026-03-30","billet_discount":"10"}}`, CodeValidation, "/settings/billet_discount"},
			{"missing", `{"items":[{"name":"a","value":1000}],"settings":{}}`, CodeValidation, "/settings/expire_at"},
			{"oversize", `{"items":[{"name":"a","value":1000}],"settings":{"expire_at":"2026-03-30","message":"` + strings.Repeat("m", 81) + `"}}`, CodeValidation, "/settings/message"},
		}},
		{method: "POST", path: ch("/pay"), rid: chNew.ChargeID, valid: `{"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":"2026-03-20"}}}`, bad: []badInput{
			unknown(`{"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":"2026-03-20"}}}`), broken, notObject,
			{"wrong type", `{"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":"2026-03-20","configurations":{"fine":"2"}}}}`, CodeValidation, "/payment/banking_billet/configurations/fine"},
			{"missing", `{}`, CodeValidation, "/payment"},
			{"oversize", `{"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":"2026-03-20","message":"` + strings.Repeat("m", 101) + `"}}}`, CodeValidation, "/payment/banking_billet/message"},
		}},
		{method: "POST", path: ch("/link"), rid: chNew.ChargeID, valid: linkValid, bad: append(linkBad,
			badInput{"missing", `{"payment_method":"all"}`, CodeValidation, "/expire_at"})},
		{method: "PUT", path: ch("/link"), rid: link.ChargeID, valid: linkValid, bad: linkBad},
		{method: "POST", path: ch("/link/resend"), rid: link.ChargeID, valid: `{"email":"a@example.com"}`, bad: emailBad(`{"email":"a@example.com"}`)},
		{method: "GET", path: ch(""), rid: slip.ChargeID},
		{method: "PUT", path: ch("/metadata"), rid: chNew.ChargeID, valid: `{"custom_id":"x"}`, bad: metadataBad(`{"custom_id":"x"}`)},
		{method: "PUT", path: ch("/billet"), rid: slip.ChargeID, valid: `{"expire_at":"2026-03-25"}`, bad: expireBad(`{"expire_at":"2026-03-25"}`)},
		{method: "POST", path: ch("/billet/resend"), rid: slip.ChargeID, valid: `{"email":"a@example.com"}`, bad: emailBad(`{"email":"a@example.com"}`)},
		{method: "PUT", path: ch("/cancel"), rid: chNew.ChargeID},
		{method: "PUT", path: ch("/settle"), rid: slip.ChargeID},
		{method: "POST", path: ch("/history"), rid: chNew.ChargeID, valid: `{"description":"x"}`, bad: historyBad(`{"description":"x"}`)},
		{method: "POST", path: ch("/retry"), rid: refused.ChargeID, valid: cardValid, bad: []badInput{
			unknown(cardValid), broken, notObject,
			{"wrong type", `{"payment":{"credit_card":{"customer":` + cardCust + `,"billing_address":` + addr + `,"payment_token":7}}}`, CodeValidation, "/payment/credit_card/payment_token"},
			{"missing", `{"payment":{}}`, CodeValidation, "/payment/credit_card"},
			{"oversize", `{"payment":{"credit_card":{"customer":` + strings.Replace(cardCust, "Gorbadoc Oldbuck", long300, 1) + `,"billing_address":` + addr + `,"payment_token":"x"}}}`, CodeValidation, "/payment/credit_card/customer/name"},
		}},
		{method: "POST", path: "/v1/charge/card/{id}/refund", rid: refused.ChargeID, valid: `{"amount":100}`, bad: []badInput{
			unknown(`{"amount":100}`), broken, notObject,
			{"wrong type", `{"amount":"100"}`, CodeValidation, "/amount"},
		}},
		{method: "POST", path: "/v1/carnet", valid: `{"items":[{"name":"a","value":1000}],"customer":` + cust + `,"expire_at":"2026-04-10","repeats":2}`, bad: []badInput{
			unknown(`{"items":[{"name":"a","value":1000}],"customer":` + cust + `,"expire_at":"2026-04-10","repeats":2}`), broken, notObject,
			{"wrong type", `{"items":[{"name":"a","value":1000}],"customer":` + cust + `,"expire_at":"2026-04-10","repeats":"2"}`, CodeValidation, "/repeats"},
			{"missing", `{"items":[{"name":"a","value":1000}],"customer":` + cust + `,"repeats":2}`, CodeValidation, "/expire_at"},
			{"oversize", `{"items":[{"name":"a","value":1000}],"customer":` + cust + `,"expire_at":"2026-04-10","repeats":2,"message":"` + strings.Repeat("m", 81) + `"}`, CodeValidation, "/message"},
		}},
		{method: "GET", path: carnet, rid: cn.CarnetID},
		{method: "PUT", path: carnet + "/metadata", rid: cn.CarnetID, valid: `{"custom_id":"x"}`, bad: metadataBad(`{"custom_id":"x"}`)},
		{method: "PUT", path: carnet + "/parcel/2", rid: cn.CarnetID, valid: `{"expire_at":"2026-06-10"}`, bad: expireBad(`{"expire_at":"2026-06-10"}`)},
		{method: "PUT", path: carnet + "/parcels", rid: cn.CarnetID, valid: `{"parcels":[{"parcel":2,"expire_at":"2026-06-10"}]}`, bad: []badInput{
			unknown(`{"parcels":[{"parcel":2,"expire_at":"2026-06-10"}]}`), broken, notObject,
			{"wrong type", `{"parcels":[{"parcel":"2","expire_at":"2026-06-10"}]}`, CodeValidation, "/parcels/0/parcel"},
			{"missing", `{"parcels":[{"parcel":2}]}`, CodeValidation, "/parcels/0/expire_at"},
			{"oversize", `{"parcels":[{"parcel":2,"expire_at":"` + long300 + `"}]}`, CodeValidation, "/parcels/0/expire_at"},
		}},
		{method: "PUT", path: carnet + "/cancel", rid: cn.CarnetID},
		{method: "PUT", path: carnet + "/parcel/3/cancel", rid: cn.CarnetID},
		{method: "POST", path: carnet + "/resend", rid: cn.CarnetID, valid: `{"email":"a@example.com"}`, bad: emailBad(`{"email":"a@example.com"}`)},
		{method: "POST", path: carnet + "/parcel/1/resend", rid: cn.CarnetID, valid: `{"email":"a@example.com"}`, bad: emailBad(`{"email":"a@example.com"}`)},
		{method: "POST", path: carnet + "/history", rid: cn.CarnetID, valid: `{"description":"x"}`, bad: historyBad(`{"description":"x"}`)},
		{method: "PUT", path: carnet + "/settle", rid: cn.CarnetID},
		{method: "PUT", path: carnet + "/parcel/1/settle", rid: cn.CarnetID},
		{method: "GET", path: "/v1/charges?charge_type=billet&begin_date=2026-03-01&end_date=2026-03-31"},
		{method: "GET", path: "/v1/installments?brand=visa&total=10000"},
		{method: "GET", path: "/v1/notification/" + strings.Repeat("0", 32)},
	}
	// Snapshot of the first account's resources: no refused request may
	// change them.
	snapshot := func() string {
		var b strings.Builder
		for _, n := range []int64{chNew.ChargeID, slip.ChargeID, link.ChargeID, refused.ChargeID} {
			c, err := e.c.GetCharge(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(c)
			b.Write(j)
		}
		c, err := e.c.GetCarnet(ctx, cn.CarnetID)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(c)
		b.Write(j)
		return b.String()
	}
	before := snapshot()
	var body []byte
	for i := range routes {
		routes[i].tmpl = routes[i].path
		routes[i].path = strings.Replace(routes[i].path, "{id}", id(routes[i].rid), 1)
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.tmpl, func(t *testing.T) {
			for _, b := range r.bad {
				_, err := e.c.Do(ctx, api.V1, r.method, r.path, []byte(b.body))
				if b.prop == "" {
					ae := apiErr(t, err, 400, b.code, "")
					if ae.Property == "" {
						t.Errorf("%s: no property in %+v", b.kind, ae)
					}
					continue
				}
				t.Run(b.kind, func(t *testing.T) { apiErr(t, err, 400, b.code, b.prop) })
			}
			if r.valid != "" {
				body = []byte(r.valid)
			} else {
				body = nil
			}
			if r.rid != 0 {
				// Another account gets exactly the answer of a missing id.
				_, errForeign := e.c2.Do(ctx, api.V1, r.method, r.path, body)
				missing := strings.Replace(r.tmpl, "{id}", "999999999", 1)
				_, errMissing := e.c.Do(ctx, api.V1, r.method, missing, body)
				a1 := apiErr(t, errForeign, 400, CodeNotFound, "id")
				a2 := apiErr(t, errMissing, 400, CodeNotFound, "id")
				if a1.Description != a2.Description || a1.Err != a2.Err {
					t.Errorf("foreign %+v differs from missing %+v", a1, a2)
				}
				// A path id that is not a positive integer.
				bad := strings.Replace(r.tmpl, "{id}", "-1", 1)
				_, err := e.c.Do(ctx, api.V1, r.method, bad, body)
				apiErr(t, err, 400, CodeValidation, "/id")
			}
			// No token at all.
			st, eb := rawNoClient(t, e, r.method, r.path, "", body)
			if st != 401 || eb.Code == 0 || eb.Error == "" || eb.Description == nil {
				t.Errorf("no token: %d %+v", st, eb)
			}
			st, _ = rawNoClient(t, e, r.method, r.path, "not-a-token", body)
			if st != 401 {
				t.Errorf("unknown token: %d", st)
			}
		})
	}
	if after := snapshot(); after != before {
		t.Fatalf("refused requests changed the resources:\n%s\n%s", before, after)
	}
	// Wrong states not met in the other tests.
	apiErr(t, e.c.UpdateBillet(ctx, chNew.ChargeID, "2026-03-25"), 400, CodeOnlyWaitingUnpaid, "")
	apiErr(t, e.c.UpdateBillet(ctx, refused.ChargeID, "2026-03-25"), 400, CodeOnlyWaitingUnpaid, "")
	apiErr(t, e.c.ResendBillet(ctx, chNew.ChargeID, "a@example.com"), 400, CodeResend, "")
	apiErr(t, e.c.RefundCard(ctx, slip.ChargeID, 0), 400, CodeRefund, "")
	_, err = e.c.RetryCardCharge(ctx, slip.ChargeID, api.CardRetry{Customer: customer(), BillingAddress: address(), PaymentToken: tok.PaymentToken})
	apiErr(t, err, 400, CodeRetry, "")
	_, err = e.c.CreateChargeLink(ctx, slip.ChargeID, api.LinkSettings{ExpireAt: "2026-03-30"})
	apiErr(t, err, 400, CodeAlreadyPaymentForm, "")
	apiErr(t, e.c.UpdateParcel(ctx, cn.CarnetID, 0, "2026-06-10"), 400, CodeValidation, "/parcel")
	// An expired token is refused on every route.
	tok2 := benchToken(t, e)
	e.clk.Advance(601 * time.Second)
	for _, r := range routes {
		if st, eb := rawNoClient(t, e, r.method, r.path, tok2, []byte(r.valid)); st != 401 || eb.Code == 0 {
			t.Errorf("%s %s with an expired token: %d %+v", r.method, r.path, st, eb)
		}
	}
}

type v1ErrorBody struct {
	Code        int    `json:"code"`
	Error       string `json:"error"`
	Description any    `json:"error_description"`
}

// rawNoClient sends a request with the given bearer token (none when
// empty), outside api.Client, and returns the status and error body.
func rawNoClient(t *testing.T, e *env, method, path, tok string, body []byte) (int, v1ErrorBody) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb v1ErrorBody
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		if err := json.Unmarshal(raw, &eb); err != nil {
			t.Errorf("%s %s: %d with a body that is not the error object: %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, eb
}
