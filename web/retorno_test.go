package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"remessa/sandbox/control"
)

// TestRetornoOnRunPage: the school's carnets run on the desk; one parcel
// is paid at the sandbox; the run page writes a CNAB 240 retorno (a sync
// first) and offers it for download, through a real server. A second
// retorno with nothing new writes nothing; a sheet's run without a layout
// and an unknown layout are refused with a message; a viewer downloads but
// does not write. The section is photographed at 1280 and 390 px.
func TestRetornoOnRunPage(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := login(t, srv, "admin", testAdminPassword)
	_, res := escolaRunDue(t, srv, c, "dia 10 do próximo mês") // run 1
	var r *response
	rn, err := srv.embedded()
	if err != nil {
		t.Fatal(err)
	}
	v := int64(10000)
	if _, err := sandboxControl(t, rn.URL).PayParcel(context.Background(), res.Rows[0].CarnetID, 1, control.PayRequest{Value: &v}, rn.PayeeCode); err != nil {
		t.Fatal(err)
	}
	c.http.Timeout = 3 * time.Minute // a busy machine under -race

	if r = c.get("/execucoes/1"); !strings.Contains(r.Body, `id="retorno"`) || !strings.Contains(r.Body, "Nenhum retorno gerado ainda") {
		t.Fatalf("the run page has no retorno section")
	}
	r = c.postForm("/execucoes/1/retorno", nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "não veio de uma remessa CNAB") || !strings.Contains(r.Body, "cnab400-341") {
		t.Fatalf("a sheet's run without a layout: %d %s", r.Status, visibleText(r.Body))
	}
	r = c.postForm("/execucoes/1/retorno", url.Values{"layout": {"cnab999"}})
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Leiaute &#34;cnab999&#34; desconhecido") {
		t.Fatalf("an unknown layout: %d %s", r.Status, visibleText(r.Body))
	}
	r = c.postForm("/execucoes/1/retorno", url.Values{"layout": {"cnab240"}})
	if r.Status != http.StatusOK || r.URL.Path != "/execucoes/1" || !strings.Contains(r.Body, "Retorno gerado") || !strings.Contains(r.Body, `data-nsa="1"`) {
		t.Fatalf("write: %d at %s: %s", r.Status, r.URL.Path, visibleText(r.Body))
	}
	d := c.get("/execucoes/1/retorno/1")
	if d.Status != http.StatusOK || !strings.Contains(d.Header.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(d.Header.Get("Content-Disposition"), "RETORNO-000001.RET") {
		t.Fatalf("download: %d %v", d.Status, d.Header)
	}
	lines := strings.Split(strings.TrimSuffix(d.Body, "\r\n"), "\r\n")
	// 40 carnets × 12 parcels: 480 entries (02) and one payment (06), a T
	// and a U each, between two headers and two trailers
	if len(lines) != 2+2*481+2 {
		t.Fatalf("%d lines", len(lines))
	}
	paid := 0
	for i, l := range lines {
		if len(l) != 240 {
			t.Fatalf("line %d: %d positions", i+1, len(l))
		}
		if l[7] == '3' && l[13] == 'U' && l[15:17] == "06" {
			paid++
			if l[77:92] != "000000000010000" {
				t.Errorf("the payment's U segment says paid %s, want 100,00", l[77:92])
			}
		}
	}
	if paid != 1 {
		t.Errorf("%d occurrences 06, want 1", paid)
	}
	if r = c.postForm("/execucoes/1/retorno", url.Values{"layout": {"cnab240"}}); !strings.Contains(r.Body, "Nada de novo desde o último retorno") {
		t.Errorf("a second retorno with nothing new: %s", visibleText(r.Body))
	}
	if d := c.get("/execucoes/1/retorno/2"); d.Status != http.StatusNotFound {
		t.Errorf("retorno 2 (never written): %d", d.Status)
	}

	ctx := newBrowser(t)
	browserAcceptLanguage(t, ctx, "pt-BR,pt;q=0.9")
	browserLogin(t, ctx, srv, "admin", adminTestPassword)
	browserGo(t, ctx, srv.URL+"/execucoes/1#retorno")
	if got := browserText(t, ctx, "#retorno tr[data-nsa='1']"); !strings.Contains(got, "CNAB 240") || !strings.Contains(got, "481") {
		t.Errorf("the retorno's row: %q", got)
	}
	browserBothWidths(t, ctx, "retorno")
	// the section itself, at both widths, for a person to look at
	dir := filepath.Dir(shot(t, ctx, "retorno-page"))
	for _, w := range []int64{1280, 390} {
		browserViewport(t, ctx, w)
		if _, err := chromedp.Run(ctx, chromedp.ScrollIntoView("#retorno")); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.Screenshot("#retorno", chromedp.NodeVisible))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s_retorno-section-%d.png", t.Name(), w)), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
