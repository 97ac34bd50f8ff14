package pix_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/pgtest"
	"remessa/sandbox"
)

// startOn starts a sandbox instance over the database dsn (real HTTP
// servers on loopback), with fixed credentials so every instance knows
// the same application.
func startOn(tb testing.TB, dsn string) *env {
	tb.Helper()
	srv, err := sandbox.New(sandbox.Config{DB: dsn, ClientID: "Client_Id_multi", ClientSecret: "Client_Secret_multi",
		Logger: zerolog.Nop(), Notify: rec})
	if err != nil {
		tb.Fatalf("sandbox.New: %v", err)
	}
	rn, err := srv.Start()
	if err != nil {
		srv.Close()
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { _ = rn.Close() })
	return &env{rn: rn, c: client(tb, rn, rn.ClientID, rn.ClientSecret, nil), key: rn.PixKey}
}

// Two instances over one PostgreSQL serve one state: what is created on
// one is read and changed on the other, a token of one is good on the
// other, and the same txid PUT through both at once makes one charge.
func TestTwoInstancesServeOneState(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := startOn(t, dsn)
	b := startOn(t, dsn)
	if a.rn.URL == b.rn.URL || a.key != b.key {
		t.Fatalf("instances: %s %s, keys %s %s", a.rn.URL, b.rn.URL, a.key, b.key)
	}

	// Create on A, read and revise on B, read the revision on A.
	tx := txid("multi", 1)
	if _, err := a.c.PutCobV(ctx, tx, cobvReq(a.key, "52998224725", "100.00")); err != nil {
		t.Fatal(err)
	}
	got, err := b.c.GetCobV(ctx, tx)
	if err != nil || got.Valor.Original != "100.00" || got.PixCopiaECola == "" {
		t.Fatalf("GetCobV on B: %+v %v", got, err)
	}
	if _, err := b.c.PatchCobV(ctx, tx, api.CobPatch{Valor: &api.PixValor{Original: "120.50"}}); err != nil {
		t.Fatal(err)
	}
	got, err = a.c.GetCobV(ctx, tx)
	if err != nil || got.Valor.Original != "120.50" || got.Revisao != 1 {
		t.Fatalf("GetCobV on A after B's PATCH: %+v %v", got, err)
	}

	// A token issued by A is accepted by B.
	req, _ := http.NewRequest("POST", a.rn.PixURL+"/oauth/token", bytes.NewReader([]byte(`{"grant_type":"client_credentials"}`)))
	req.SetBasicAuth(a.rn.ClientID, a.rn.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	req, _ = http.NewRequest("GET", b.rn.PixURL+"/v2/cobv/"+tx, nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tok.AccessToken == "" || resp.StatusCode != http.StatusOK {
		t.Fatalf("A's token on B: %d (token given: %v)", resp.StatusCode, tok.AccessToken != "")
	}

	// The same txid PUT through both at the same moment: one 201, one 409.
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, dup := map[string]int{}, map[string]int{}
	for i := range n {
		tx := txid("race", i)
		for _, e := range []*env{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := e.c.PutCobV(ctx, tx, cobvReq(e.key, "52998224725", fmt.Sprintf("%d.00", 10+i)))
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					created[tx]++
				} else if ae := asAPI(t, err); ae.Status == http.StatusConflict {
					dup[tx]++
				} else {
					t.Errorf("PUT %s: %v", tx, err)
				}
			}()
		}
	}
	wg.Wait()
	for i := range n {
		tx := txid("race", i)
		if created[tx] != 1 || dup[tx] != 1 {
			t.Errorf("txid %s: created %d times, refused %d times", tx, created[tx], dup[tx])
		}
	}
	w := window()
	w.ItensPorPagina = 1000
	for _, e := range []*env{a, b} {
		p, err := e.c.ListCobV(ctx, api.ListCobVParams{ListCobParams: api.ListCobParams{ListParams: w}})
		if err != nil || p.Parametros.Paginacao.QuantidadeTotalDeItens != n+1 {
			t.Fatalf("ListCobV on %s: %v %+v", e.rn.URL, err, p.Parametros.Paginacao)
		}
	}

	// A batch put on B is processed (by either instance's worker) and seen
	// whole on A.
	if err := b.c.PutLoteCobV(ctx, "77", api.LoteCobVRequest{Cobsv: items(b.key, "lm", 50)}); err != nil {
		t.Fatal(err)
	}
	l := waitLote(t, a.c, "77")
	for _, it := range l.Cobsv {
		if it.Status != "CRIADA" {
			t.Fatalf("item %+v", it)
		}
	}
	if _, err := a.c.GetCobV(ctx, txid("lm", 49)); err != nil {
		t.Fatal(err)
	}
	// A batch with a txid another batch holds: refused whichever instance.
	err = a.c.PutLoteCobV(ctx, "78", api.LoteCobVRequest{Cobsv: items(a.key, "lm", 1)})
	wantProblem(t, err, http.StatusBadRequest, "LoteCobVOperacaoInvalida", "cobsv[0].txid")

	// An application created on A authenticates on B at once.
	ca, _ := (&env{rn: a.rn}).appWith(t, false, "cob.read", "cob.write", "cobv.read", "cobv.write")
	_ = ca
	apps := a.rn.Server.Auth().Apps()
	last := apps[len(apps)-1]
	if _, ok := b.rn.Server.Auth().Account(last.AccountID); !ok {
		t.Fatalf("account %s unknown on B", last.AccountID)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		found := false
		for _, x := range b.rn.Server.Auth().Apps() {
			found = found || x.ClientID == last.ClientID
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("application %s never seen on B", last.ClientID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Instances started at the same moment on an empty database all come up
// (the schema and the first account are made under the writers' lock, by
// the first; the others find them) and serve one state.
func TestInstancesStartTogetherOnEmptyDB(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 3
	rns := make([]*sandbox.Running, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv, err := sandbox.New(sandbox.Config{DB: dsn, ClientID: "Client_Id_together", ClientSecret: "Client_Secret_together",
				Logger: zerolog.Nop(), Notify: rec})
			if err != nil {
				errs[i] = fmt.Errorf("sandbox.New: %w", err)
				return
			}
			if rns[i], err = srv.Start(); err != nil {
				srv.Close()
				errs[i] = fmt.Errorf("Start: %w", err)
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if rns[i] != nil {
			t.Cleanup(func() { _ = rns[i].Close() })
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
	}
	for i, rn := range rns {
		if rn.PixKey != rns[0].PixKey {
			t.Fatalf("instance %d: key %s, instance 0: %s", i, rn.PixKey, rns[0].PixKey)
		}
	}
	tx := txid("together", 1)
	first := client(t, rns[0], rns[0].ClientID, rns[0].ClientSecret, nil)
	if _, err := first.PutCobV(ctx, tx, cobvReq(rns[0].PixKey, "52998224725", "10.00")); err != nil {
		t.Fatal(err)
	}
	for i, rn := range rns {
		got, err := client(t, rn, rn.ClientID, rn.ClientSecret, nil).GetCobV(ctx, tx)
		if err != nil || got.Valor.Original != "10.00" {
			t.Fatalf("GetCobV on instance %d: %+v %v", i, got, err)
		}
	}
}
