package outbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	_ "remessa/sandbox/all"
	"remessa/sandbox/control"
	"remessa/sandbox/sandboxtest"
)

type post struct {
	path, contentType, body string
}

// hook is a loopback receiver that hands each POST to the test.
func hook(t *testing.T) (*httptest.Server, chan post) { return hookStatus(t, http.StatusOK) }

// hookStatus is hook answering status.
func hookStatus(t *testing.T, status int) (*httptest.Server, chan post) {
	ch := make(chan post, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- post{r.URL.Path, r.Header.Get("Content-Type"), string(b)}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func wait(t *testing.T, ch chan post, what string) post {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s delivered by the running sandbox's outbox within 15 s", what)
	}
	return post{}
}

// TestRunningSandboxDeliversPixWebhook goes through the whole core: the
// outbox registered as the Notifier, its loop started by the server, the
// Pix module queueing the webhook when a cob is paid.
func TestRunningSandboxDeliversPixWebhook(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	c := sandboxclient.Client(t, rn, nil)
	ctx := context.Background()
	srv, got := hook(t)
	if _, err := c.PutWebhook(ctx, rn.PixKey, srv.URL+"/webhook"); err != nil {
		t.Fatal(err)
	}
	cob, err := c.CreateCob(ctx, api.CobRequest{Valor: api.PixValor{Original: "10.00"}, Chave: rn.PixKey})
	if err != nil {
		t.Fatal(err)
	}
	paid, err := (&control.Client{BaseURL: rn.URL}).PayPix(ctx, cob.Txid, "")
	if err != nil {
		t.Fatal(err)
	}
	p := wait(t, got, "Pix webhook")
	if p.path != "/webhook/pix" || p.contentType != "application/json" {
		t.Fatalf("webhook POST %s (%s), want /webhook/pix as JSON", p.path, p.contentType)
	}
	var body struct {
		Pix []struct {
			EndToEndID string `json:"endToEndId"`
			Txid       string `json:"txid"`
			Valor      string `json:"valor"`
			Chave      string `json:"chave"`
		} `json:"pix"`
	}
	if err := json.Unmarshal([]byte(p.body), &body); err != nil {
		t.Fatalf("webhook body %q: %v", p.body, err)
	}
	if len(body.Pix) != 1 || body.Pix[0].Txid != cob.Txid || body.Pix[0].Valor != "10.00" || body.Pix[0].EndToEndID != paid.EndToEndID {
		t.Fatalf("webhook body %s, want the payment of %s (e2e %s)", p.body, cob.Txid, paid.EndToEndID)
	}
}

// TestRunningSandboxDeliversChargeNotification: a slip with a
// notification_url is settled through the API; the running outbox posts
// notification=<token>, and the token reads back the change.
func TestRunningSandboxDeliversChargeNotification(t *testing.T) {
	rn := sandboxtest.Start(t, sandbox.Config{})
	c := sandboxclient.Client(t, rn, nil)
	ctx := context.Background()
	srv, got := hook(t)
	due := time.Now().AddDate(0, 0, 10).Format("2006-01-02")
	res, err := c.CreateOneStepCharge(ctx, api.OneStepRequest{
		Items:    []api.Item{{Name: "Mensalidade", Value: 12345, Amount: 1}},
		Metadata: &api.Metadata{NotificationURL: srv.URL + "/retorno"},
		Payment: api.Payment{BankingBillet: &api.BankingBillet{ExpireAt: due,
			Customer: api.Customer{Name: "Maria das Graças Souza", CPF: "52998224725", PhoneNumber: "41999998888"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SettleCharge(ctx, res.ChargeID); err != nil {
		t.Fatal(err)
	}
	var token string
	for token == "" {
		p := wait(t, got, "charge notification")
		if p.path != "/retorno" || p.contentType != "application/x-www-form-urlencoded" {
			t.Fatalf("notification POST %s (%s)", p.path, p.contentType)
		}
		form, err := url.ParseQuery(p.body)
		if err != nil || form.Get("notification") == "" {
			t.Fatalf("notification body %q", p.body)
		}
		changes, err := c.GetNotification(ctx, form.Get("notification"))
		if err != nil {
			t.Fatal(err)
		}
		if last := changes[len(changes)-1]; last.Status.Current == "settled" {
			token = form.Get("notification")
			if last.Identifiers.ChargeID != res.ChargeID {
				t.Fatalf("change %+v is not about charge %d", last, res.ChargeID)
			}
		}
	}
}
