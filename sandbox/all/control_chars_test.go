package all_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"remessa/sandbox"
	"remessa/sandbox/sandboxtest"
)

// send calls the sandbox over HTTP with a bearer token and a JSON body.
func send(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestControlCharactersRefused sends a C0 control character inside a text
// field on routes of both APIs: each answers the route's validation error
// naming the field (3500034 with the JSON pointer on /v1, a violação with
// the property on /v2), and the same body without it is accepted. Line
// breaks pass in a slip's and a carnet's message (printed in lines), and
// nowhere else.
func TestControlCharactersRefused(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_ctl", ClientSecret: "Client_Secret_ctl"})
	v1, pix := bearer(t, rn, rn.URL, "/v1/authorize"), bearer(t, rn, rn.PixURL, "/oauth/token")
	key := rn.PixKey
	due := time.Now().AddDate(0, 2, 0).Format("2006-01-02")
	cust := `{"name":"Ana Silva","cpf":"52998224725"}`
	cobv := func(txid, nome string) string {
		return `{` + txid + `"calendario":{"dataDeVencimento":"` + due + `"},"devedor":{"cpf":"52998224725","nome":"` + nome + `"},"valor":{"original":"10.00"},"chave":"` + key + `"}`
	}
	for _, c := range []struct {
		name, method, path string
		body               func(text string) string // the body with text placed in the field
		property           string                   // v1: JSON pointer; Pix: propriedade
		multiline          bool
	}{
		{"charge item name", "POST", "/v1/charge", func(x string) string {
			return `{"items":[{"name":"Produto` + x + `X","value":1000,"amount":1}]}`
		}, "/items/0/name", false},
		{"charge custom_id", "POST", "/v1/charge", func(x string) string {
			return `{"items":[{"name":"Produto","value":1000}],"metadata":{"custom_id":"a` + x + `b"}}`
		}, "/metadata/custom_id", false},
		{"carnet customer name", "POST", "/v1/carnet", func(x string) string {
			return `{"items":[{"name":"Mensalidade","value":10000}],"customer":{"name":"Ana` + x + ` Silva","cpf":"52998224725"},"expire_at":"` + due + `","repeats":3}`
		}, "/customer/name", false},
		{"carnet message", "POST", "/v1/carnet", func(x string) string {
			return `{"items":[{"name":"Mensalidade","value":10000}],"customer":` + cust + `,"expire_at":"` + due + `","repeats":3,"message":"linha 1` + x + `linha 2"}`
		}, "/message", true},
		{"one-step slip message", "POST", "/v1/charge/one-step", func(x string) string {
			return `{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":` + cust + `,"expire_at":"` + due + `","message":"linha 1` + x + `linha 2"}}}`
		}, "/payment/banking_billet/message", true},
		{"one-step customer street", "POST", "/v1/charge/one-step", func(x string) string {
			return `{"items":[{"name":"a","value":1000}],"payment":{"banking_billet":{"customer":{"name":"Ana Silva","cpf":"52998224725","address":{"street":"Rua` + x + `A","number":"1","neighborhood":"Centro","zipcode":"01001000","city":"São Paulo","state":"SP"}},"expire_at":"` + due + `"}}}`
		}, "/payment/banking_billet/customer/address/street", false},
		{"cob solicitacaoPagador", "PUT", "/v2/cob/abcdefghijklmnopqrstuvwxyz" + "C1", func(x string) string {
			return `{"calendario":{"expiracao":3600},"valor":{"original":"1.00"},"chave":"` + key + `","solicitacaoPagador":"Pedido` + x + `1"}`
		}, "solicitacaoPagador", false},
		{"cobv devedor nome", "PUT", "/v2/cobv/abcdefghijklmnopqrstuvwxyz" + "C2", func(x string) string {
			return cobv("", "Ana"+x+" Silva")
		}, "devedor.nome", false},
		{"lotecobv descricao", "PUT", "/v2/lotecobv/9001", func(x string) string {
			return `{"descricao":"lote` + x + `1","cobsv":[` + cobv(`"txid":"abcdefghijklmnopqrstuvwxyzC3",`, "Ana Silva") + `]}`
		}, "descricao", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, tok := rn.URL, v1
			if strings.HasPrefix(c.path, "/v2/") {
				base, tok = rn.PixURL, pix
			}
			bad := []string{`\u0000`, `\u0001`, `\u001f`, `\u007f`, `\r`}
			if !c.multiline {
				bad = append(bad, `\n`, `\r\n`)
			}
			for _, x := range bad {
				status, body := send(t, c.method, base+c.path, tok, c.body(x))
				if status != http.StatusBadRequest {
					t.Errorf("%q: %d %s, want 400", x, status, body)
					continue
				}
				if strings.HasPrefix(c.path, "/v1/") {
					var e struct {
						Code        int    `json:"code"`
						Error       string `json:"error"`
						Description struct {
							Property string `json:"property"`
							Message  string `json:"message"`
						} `json:"error_description"`
					}
					if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != 3500034 || e.Error != "validation_error" ||
						e.Description.Property != c.property || !strings.Contains(e.Description.Message, "Caractere de controle") {
						t.Errorf("%q: %s, want 3500034 validation_error at %s", x, body, c.property)
					}
				} else {
					var p struct {
						Violacoes []struct {
							Razao       string `json:"razao"`
							Propriedade string `json:"propriedade"`
						} `json:"violacoes"`
					}
					found := false
					if err := json.Unmarshal([]byte(body), &p); err == nil {
						for _, v := range p.Violacoes {
							found = found || v.Propriedade == c.property && strings.Contains(v.Razao, "Caractere de controle")
						}
					}
					if !found && !(strings.Contains(body, `"nome"`) && strings.Contains(body, c.property) && strings.Contains(body, "Caractere de controle")) {
						t.Errorf("%q: %s, want a violação of %s", x, body, c.property)
					}
				}
			}
			good := []string{`\t`, " "}
			if c.multiline {
				good = append(good, `\n`, `\r\n`)
			}
			for i, x := range good {
				if i > 0 && strings.HasPrefix(c.path, "/v2/") {
					break // one creation per txid
				}
				status, body := send(t, c.method, base+c.path, tok, c.body(x))
				if status/100 != 2 {
					t.Errorf("%q: %d %s, want a success", x, status, body)
				}
			}
		})
	}
}

// TestControlCharactersDenyBatchItem: the items of a batch are judged
// after the 202 (as the real service does), so a control character in an
// item's field makes that item NEGADA with a problema naming the field,
// while its neighbour is created.
func TestControlCharactersDenyBatchItem(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{ClientID: "Client_Id_ctl", ClientSecret: "Client_Secret_ctl"})
	pix := bearer(t, rn, rn.PixURL, "/oauth/token")
	due := time.Now().AddDate(0, 2, 0).Format("2006-01-02")
	item := func(txid, nome string) string {
		return `{"txid":"` + txid + `","calendario":{"dataDeVencimento":"` + due + `"},"devedor":{"cpf":"52998224725","nome":"` + nome + `"},"valor":{"original":"10.00"},"chave":"` + rn.PixKey + `"}`
	}
	body := `{"descricao":"lote","cobsv":[` + item("abcdefghijklmnopqrstuvwxyzL1", `Ana\u0000 Silva`) + `,` + item("abcdefghijklmnopqrstuvwxyzL2", "Ana Silva") + `]}`
	if status, b := send(t, "PUT", rn.PixURL+"/v2/lotecobv/9002", pix, body); status != http.StatusAccepted {
		t.Fatalf("PUT lotecobv: %d %s", status, b)
	}
	var lote struct {
		Cobsv []struct {
			Txid     string `json:"txid"`
			Status   string `json:"status"`
			Problema *struct {
				Violacoes []struct {
					Razao       string `json:"razao"`
					Propriedade string `json:"propriedade"`
				} `json:"violacoes"`
			} `json:"problema"`
		} `json:"cobsv"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, b := send(t, "GET", rn.PixURL+"/v2/lotecobv/9002", pix, "")
		if status != http.StatusOK {
			t.Fatalf("GET lotecobv: %d %s", status, b)
		}
		if err := json.Unmarshal([]byte(b), &lote); err != nil || len(lote.Cobsv) != 2 {
			t.Fatalf("GET lotecobv: %v %s", err, b)
		}
		if lote.Cobsv[0].Status != "EM_PROCESSAMENTO" && lote.Cobsv[1].Status != "EM_PROCESSAMENTO" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch still processing: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	bad, good := lote.Cobsv[0], lote.Cobsv[1]
	if bad.Txid != "abcdefghijklmnopqrstuvwxyzL1" {
		bad, good = good, bad
	}
	if good.Status != "CRIADA" {
		t.Errorf("clean item: %+v", good)
	}
	found := false
	if bad.Problema != nil {
		for _, v := range bad.Problema.Violacoes {
			found = found || strings.HasSuffix(v.Propriedade, "devedor.nome") && strings.Contains(v.Razao, "Caractere de controle")
		}
	}
	if bad.Status != "NEGADA" || !found {
		t.Errorf("item with a NUL: %+v", bad)
	}
}
