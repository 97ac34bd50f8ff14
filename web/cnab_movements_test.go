package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/internal/cnabtest"
	"remessa/pipeline/results"
	"remessa/pipeline/run/runtest"
)

// TestPlanShowsCNABMovements: an ERP's second remessa cancels one title
// (02) and moves another's due date (06) of the first remessa's run, and
// names a title nobody issued. The desk's plan, where the clerk confirms,
// shows those movements (each group with the run that issued its titles,
// the refusal with its line and positions) before anything is sent, and a
// file of movements only can be confirmed (it was refused: "nothing to
// issue"); after the run, the service has the one charge cancelled and the
// other moved.
func TestPlanShowsCNABMovements(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	var ts []cnabtest.Title240
	for i := 1; i <= 3; i++ {
		tt := cnabtest.OkTitle(fmt.Sprintf("MV%d", i), 10_000*int64(i))
		tt.Doc = runtest.CPF(fmt.Sprintf("%09d", 300000000+i*7919))
		ts = append(ts, tt)
	}
	upload1 := func(name, body string) string {
		t.Helper()
		r := c.postMultipart("/remessas", url.Values{"kind": {"boletos"}, "account": {"1"}}, upload{Field: "planilha", Name: name, Data: []byte(body)})
		if r.Status != http.StatusOK || !strings.HasSuffix(r.URL.Path, "/colunas") {
			t.Fatalf("upload %s: %d at %s: %s", name, r.Status, r.URL.Path, visibleText(r.Body))
		}
		base := strings.TrimSuffix(r.URL.Path, "/colunas")
		if r = c.postForm(base+"/colunas", nil); !strings.HasSuffix(r.URL.Path, "/configuracao") {
			t.Fatalf("columns of %s: %d at %s: %s", name, r.Status, r.URL.Path, visibleText(r.Body))
		}
		if r = c.postForm(base+"/configuracao", url.Values{"name": {name}, "on_invalid": {"skip"}}); !strings.HasSuffix(r.URL.Path, "/validacao") {
			t.Fatalf("settings of %s: %d at %s: %s", name, r.Status, r.URL.Path, visibleText(r.Body))
		}
		return base
	}
	confirm := func(base, want string) *runRecord {
		t.Helper()
		r := c.postForm(base+"/executar", nil)
		if !strings.HasPrefix(r.URL.Path, "/execucoes/") {
			t.Fatalf("confirm: %d at %s: %s", r.Status, r.URL.Path, strings.Join(strings.Fields(visibleText(r.Body)), " "))
		}
		var id int64
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/execucoes/"), "%d", &id)
		rr := waitRun(t, srv, id, 90*time.Second)
		if rr.Status != want {
			t.Fatalf("run %d ended %s, want %s: %s", id, rr.Status, want, rr.Message)
		}
		return rr
	}

	base := upload1("COB1.REM", cnabtest.File240(1, ts, "\r\n"))
	if r := c.get(base + "/plano"); strings.Contains(r.Body, `id="movimentos"`) {
		t.Errorf("a remessa of entries only shows a movements section")
	}
	first := confirm(base, "done")
	firstID := filepath.Base(first.Dir)

	cancel := cnabtest.OkTitle("MV1", 10_000)
	cancel.Doc, cancel.Mov = ts[0].Doc, 2
	move := cnabtest.OkTitle("MV2", 20_000)
	move.Doc, move.Mov, move.Due = ts[1].Doc, 6, "15032027"
	nobody := cnabtest.OkTitle("NINGUEM", 5_000)
	nobody.Mov = 2
	base = upload1("COB2.REM", cnabtest.File240(2, []cnabtest.Title240{cancel, move, nobody}, "\r\n"))
	r := c.get(base + "/plano")
	if r.Status != http.StatusOK {
		t.Fatalf("plan: %d %s", r.Status, visibleText(r.Body))
	}
	sec := r.Body[max(0, strings.Index(r.Body, `id="movimentos"`)):]
	sec = sec[:max(0, strings.Index(sec, "</section>"))]
	text := strings.Join(strings.Fields(visibleText(sec)), " ")
	for _, w := range []string{
		"Movimentos do arquivo",
		"3 título(s) do arquivo não são entradas",
		"02 — pedido de baixa " + firstID + " 1",
		"06 — alteração de vencimento " + firstID + " 1",
		"Recusados (nada será alterado): 1",
		"título NINGUEM, movimento 02",
	} {
		if !strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
			t.Errorf("the plan's movements section lacks %q:\n%s", w, text)
		}
	}
	if !strings.Contains(text, "linha 7") {
		t.Errorf("the refusal does not say its line (the third title's P is line 7):\n%s", text)
	}
	// a file of movements only issues nothing and is still confirmed
	if !strings.Contains(r.Body, "Emitir 0 cobrança(s) e aplicar 2 movimento(s)") {
		t.Errorf("the confirm button does not say the movements it applies")
	}
	// the refused movement makes the run end with problems, saying so
	if rr := confirm(base, "problems"); !strings.Contains(rr.Message, "2 aplicado(s), 1 recusado(s)") {
		t.Errorf("the run's message %q does not count the movements", rr.Message)
	}

	res, err := results.Load(filepath.Join(first.Dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	cl := runtest.Client(t, rn)
	for _, row := range res.Rows {
		ch, err := cl.GetCharge(context.Background(), row.ChargeIDs[0])
		if err != nil {
			t.Fatal(err)
		}
		switch row.Key {
		case "MV1":
			if ch.Status != "canceled" {
				t.Errorf("MV1 is %s, want canceled", ch.Status)
			}
		case "MV2":
			due := ""
			if ch.Payment != nil && ch.Payment.BankingBillet != nil {
				due = ch.Payment.BankingBillet.ExpireAt
			}
			if ch.Status == "canceled" || !strings.HasPrefix(due, "2027-03-15") {
				t.Errorf("MV2 is %s due %q, want due 2027-03-15", ch.Status, due)
			}
		case "MV3":
			if ch.Status == "canceled" {
				t.Errorf("MV3 was in neither file's movements, yet it is %s", ch.Status)
			}
		}
	}
}
