package all_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// The golden files in testdata/spec are the answers the service-spec
// (../shared/spec/service-spec.md) describes, written out as JSON from its
// field lists (testdata/spec/README.md names the section of each). These
// tests compare the sandbox's real answers with them as untyped JSON (key
// paths and JSON types, not values), so a field spelt wrong in a struct
// shared by the client and the sandbox (remessa/wire) is still caught.

// jsonType is the JSON type of a value decoded into any.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// keyPaths records the JSON types seen at each key path of v ("data.items[].name").
func keyPaths(v any, path string, out map[string]map[string]bool) {
	if path != "" {
		if out[path] == nil {
			out[path] = map[string]bool{}
		}
		out[path][jsonType(v)] = true
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			keyPaths(e, p, out)
		}
	case []any:
		for _, e := range x {
			keyPaths(e, path+"[]", out)
		}
	}
}

// specMismatches lists the key paths of golden that got are missing or
// have another JSON type. A null in golden (the spec's "or null") accepts
// any type.
func specMismatches(golden, got any) []string {
	want, have := map[string]map[string]bool{}, map[string]map[string]bool{}
	keyPaths(golden, "", want)
	keyPaths(got, "", have)
	var bad []string
	for p, types := range want {
		h := have[p]
		if h == nil {
			bad = append(bad, "missing "+p)
			continue
		}
		for typ := range types {
			if typ != "null" && !h[typ] {
				bad = append(bad, fmt.Sprintf("%s: %s in the spec, %s in the sandbox", p, typ, strings.Join(sortedKeys(h), "|")))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func sortedKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// checkSpec compares body (the sandbox's answer) with testdata/spec/name.
func checkSpec(t *testing.T, name string, body []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "spec", name))
	if err != nil {
		t.Fatal(err)
	}
	var golden, got any
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: the sandbox's answer is not JSON: %v\n%s", name, err, body)
	}
	if jsonType(golden) != "object" || len(golden.(map[string]any)) == 0 {
		t.Fatalf("%s: golden is not a JSON object", name)
	}
	for _, m := range specMismatches(golden, got) {
		t.Errorf("%s: %s", name, m)
	}
	if t.Failed() {
		t.Logf("sandbox answered:\n%s", body)
	}
}

// specClient calls one API of a sandbox with a bearer token.
type specClient struct {
	t     *testing.T
	base  string
	token string
}

func (c specClient) call(method, path string, body any, want int) []byte {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, out)
	}
	return out
}

func field(t *testing.T, body []byte, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %s", path, body)
		}
		v = m[k]
	}
	return v
}

func intField(t *testing.T, body []byte, path ...string) int64 {
	t.Helper()
	n, ok := field(t, body, path...).(float64)
	if !ok || n <= 0 {
		t.Fatalf("no id at %v in %s", path, body)
	}
	return int64(n)
}

func specSandbox(t *testing.T) (*sandbox.Running, specClient, specClient) {
	t.Helper()
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_spec", ClientSecret: "Client_Secret_spec"})
	v1 := specClient{t: t, base: rn.URL, token: bearer(t, rn, rn.URL, "/v1/authorize")}
	pix := specClient{t: t, base: rn.PixURL, token: bearer(t, rn, rn.PixURL, "/oauth/token")}
	return rn, v1, pix
}

// dueDate is a due date comfortably after today in São Paulo.
func dueDate(months int) string { return time.Now().AddDate(0, months, 10).Format("2006-01-02") }

var specCustomer = map[string]any{
	"name": "Maria Souza", "cpf": "52998224725", "email": "maria@example.com", "phone_number": "41999998888",
	"birth": "1980-01-15",
	"address": map[string]any{"street": "Rua A", "number": "10", "neighborhood": "Centro", "zipcode": "80010000",
		"city": "Curitiba", "complement": "Apto 1", "state": "PR"},
}

// TestSpecChargeJSON: GET /v1/charge/:id of a one-step slip answers the
// fields of the spec's Charge (envelope, items, history, shippings,
// customer with address, payment.banking_billet).
func TestSpecChargeJSON(t *testing.T) {
	_, v1, _ := specSandbox(t)
	created := v1.call(http.MethodPost, "/v1/charge/one-step", map[string]any{
		"items":     []any{map[string]any{"name": "Mensalidade", "value": 2500, "amount": 1}},
		"shippings": []any{map[string]any{"name": "Frete", "value": 1000}},
		"metadata":  map[string]any{"custom_id": "pedido-1", "notification_url": "https://example.com/notify"},
		"payment": map[string]any{"banking_billet": map[string]any{
			"customer": specCustomer, "expire_at": dueDate(1), "message": "Obrigado",
			"configurations": map[string]any{"fine": 200, "interest": 33},
		}},
	}, http.StatusOK)
	got := v1.call(http.MethodGet, fmt.Sprintf("/v1/charge/%d", intField(t, created, "data", "charge_id")), nil, http.StatusOK)
	checkSpec(t, "charge.json", got)
}

var specCarnet = map[string]any{
	"items":          []any{map[string]any{"name": "Mensalidade", "value": 5000, "amount": 1}},
	"customer":       specCustomer,
	"repeats":        3,
	"split_items":    false,
	"metadata":       map[string]any{"custom_id": "carne-1", "notification_url": "https://example.com/notify"},
	"configurations": map[string]any{"fine": 200, "interest": 33},
	"message":        "Mensalidades de 2026",
}

// TestSpecCarnetJSON: POST /v1/carnet answers the spec's creation result
// (carnet_link, parcels with parcel_link and parcel as a string), and
// GET /v1/carnet/:id the spec's Carnet (parcel as an integer).
func TestSpecCarnetJSON(t *testing.T) {
	_, v1, _ := specSandbox(t)
	body := map[string]any{"expire_at": dueDate(1)}
	for k, v := range specCarnet {
		body[k] = v
	}
	created := v1.call(http.MethodPost, "/v1/carnet", body, http.StatusOK)
	checkSpec(t, "carnet_create.json", created)
	got := v1.call(http.MethodGet, fmt.Sprintf("/v1/carnet/%d", intField(t, created, "data", "carnet_id")), nil, http.StatusOK)
	checkSpec(t, "carnet.json", got)
}

// TestSpecCobJSON: GET /v2/cob/:txid and GET /v2/cobv/:txid answer the
// spec's Pix charge (its "Pix charge with split" shape without the split's
// config; recebedor and the due-date calendar on cobv only).
func TestSpecCobJSON(t *testing.T) {
	rn, _, pix := specSandbox(t)
	const cobTxid, cobvTxid = "speccob0000000000000000000001", "speccobv000000000000000000001"
	pix.call(http.MethodPut, "/v2/cob/"+cobTxid, map[string]any{
		"calendario": map[string]any{"expiracao": 3600},
		"devedor":    map[string]any{"cpf": "52998224725", "nome": "Maria Souza"},
		"valor":      map[string]any{"original": "25.00"}, "chave": rn.PixKey, "solicitacaoPagador": "Mensalidade",
	}, http.StatusCreated)
	checkSpec(t, "cob.json", pix.call(http.MethodGet, "/v2/cob/"+cobTxid, nil, http.StatusOK))

	pix.call(http.MethodPut, "/v2/cobv/"+cobvTxid, map[string]any{
		"calendario": map[string]any{"dataDeVencimento": dueDate(1), "validadeAposVencimento": 30},
		"devedor": map[string]any{"logradouro": "Rua A, 10", "cidade": "Curitiba", "uf": "PR", "cep": "80010000",
			"cpf": "52998224725", "nome": "Maria Souza"},
		"valor": map[string]any{"original": "50.00"}, "chave": rn.PixKey, "solicitacaoPagador": "Mensalidade",
	}, http.StatusCreated)
	checkSpec(t, "cobv.json", pix.call(http.MethodGet, "/v2/cobv/"+cobvTxid, nil, http.StatusOK))
}

// TestSpecPixRecebidoJSON: GET /v2/pix/:e2eId of a paid cob with a settled
// refund answers the spec's received Pix with its devolucoes.
func TestSpecPixRecebidoJSON(t *testing.T) {
	rn, _, pix := specSandbox(t)
	const txid = "specpix0000000000000000000001"
	pix.call(http.MethodPut, "/v2/cob/"+txid, map[string]any{
		"calendario": map[string]any{"expiracao": 3600},
		"valor":      map[string]any{"original": "25.00"}, "chave": rn.PixKey,
	}, http.StatusCreated)
	// The sandbox's own control route pays it (not part of the real API).
	paid := specClient{t: t, base: rn.PixURL}.call(http.MethodPost, "/sandbox/pix/pay", map[string]any{"txid": txid}, http.StatusCreated)
	e2e, _ := field(t, paid, "endToEndId").(string)
	if e2e == "" {
		t.Fatalf("pay answered %s", paid)
	}
	pix.call(http.MethodPut, "/v2/pix/"+e2e+"/devolucao/dev1", map[string]any{"valor": "5.00"}, http.StatusCreated)
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		got = pix.call(http.MethodGet, "/v2/pix/"+e2e, nil, http.StatusOK)
		if !bytes.Contains(got, []byte(`"EM_PROCESSAMENTO"`)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	checkSpec(t, "pix_recebido.json", got)
}

// TestSpecMismatchesCatchesMisspelling: the comparison itself fails on a
// renamed field, a field of another JSON type and a missing nested field.
func TestSpecMismatchesCatchesMisspelling(t *testing.T) {
	var golden, got any
	_ = json.Unmarshal([]byte(`{"a":{"endToEndId":"x","n":1,"l":[{"k":"v"}]},"c":null}`), &golden)
	_ = json.Unmarshal([]byte(`{"a":{"endToEndID":"x","n":"1","l":[{"K":"v"}]},"c":5,"extra":true}`), &got)
	want := []string{"a.n: number in the spec, string in the sandbox", "missing a.endToEndId", "missing a.l[].k"}
	if bad := specMismatches(golden, got); strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("mismatches %q, want %q", bad, want)
	}
	if bad := specMismatches(golden, golden); len(bad) != 0 {
		t.Errorf("golden against itself: %q", bad)
	}
}
