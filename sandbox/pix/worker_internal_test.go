package pix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// A task that panics (here a batch holding a nil item, which no request
// can build) is reported as errTaskPanicked instead of taking the sandbox
// down with it.
func TestTaskPanicIsContained(t *testing.T) {
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &Module{st: st, clk: clock.Real{}, queued: map[task]bool{}}
	m.initCaches()
	if err := st.Tx(context.Background(), func(tx *store.Tx) error {
		return tx.PutRaw(storeLote, "acc", "1", []byte(`{"id":"1","items":[null]}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.process(context.Background(), task{kind: taskLote, account: "acc", id: "1"}); !errors.Is(err, errTaskPanicked) {
		t.Fatalf("process = %v, want errTaskPanicked", err)
	}
	if err := m.process(context.Background(), task{kind: taskLote, account: "acc", id: "2"}); err != nil {
		t.Fatalf("a missing batch: %v", err)
	}
}

// prepareLote checks the items PUT decoded (handOff) as it checks the
// same items decoded again from the stored batch: the same input and
// violations for each, a key sent twice and an invalid item included;
// an item whose stored request changed since is decoded from the store.
func TestPrepareLoteHandOffSameAsStored(t *testing.T) {
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &Module{st: st, clk: clock.Real{}, queued: map[task]bool{}}
	m.initCaches()
	ai := accountInfo{ID: "acc", Keys: []string{"minha@example.com"}}
	item := func(i int, extra string) string {
		return fmt.Sprintf(`{"txid":"prepare%022d","calendario":{"dataDeVencimento":"2030-06-30"},"valor":{"original":"%d.00"},"chave":"minha@example.com"%s}`, i, 10+i, extra)
	}
	body := `{"cobsv":[` + strings.Join([]string{
		item(1, `,"devedor":{"cpf":"52998224725","nome":"Fulano"}`),
		item(2, `,"devedor":{"cpf":"52998224725","nome":"A"},"devedor":{"cnpj":"12ABC34501DE35","nome":"B"}`),
		item(3, `,"devedor":{"cpf":"111","nome":"Inválido"}`),
		item(4, `,"devedor":{"cpf":"52998224725","nome":"Fulano"}, "solicitacaoPagador" : "com espaços:  e dois-pontos"`),
	}, ",") + `]}`
	lb, e := parseLoteBody([]byte(body), tLoteInvalido, titleLote)
	if e != nil {
		t.Fatal(e.p)
	}
	l := &lote{ID: "7", Items: make([]*loteItem, len(lb.txids))}
	for i, tx := range lb.txids {
		l.Items[i] = &loteItem{Txid: tx, Status: ItemProcessando, Req: lb.raws[i], Op: "put"}
	}
	l.Items[3].Req = []byte(item(4, `,"devedor":{"cpf":"52998224725","nome":"Fulano"},"solicitacaoPagador":"mudou"`)) // changed since PUT
	ctx := context.Background()
	if err := st.Tx(ctx, func(tx *store.Tx) error { return m.lotes.Put(tx, "acc", "7", l) }); err != nil {
		t.Fatal(err)
	}
	enc := func(ps []*preparedItem) []string {
		var out []string
		for _, p := range ps {
			b, _ := json.Marshal([]any{p.in, p.vs})
			out = append(out, string(b))
		}
		return out
	}
	stored := enc(m.prepareLote(ctx, ai, "7"))
	m.handOff("acc", "7", lb)
	handed := enc(m.prepareLote(ctx, ai, "7"))
	if len(stored) != 4 || strings.Join(stored, "\n") != strings.Join(handed, "\n") {
		t.Fatalf("stored:\n%s\nhanded off:\n%s", strings.Join(stored, "\n"), strings.Join(handed, "\n"))
	}
	if !strings.Contains(stored[3], "mudou") || !strings.Contains(stored[1], "12ABC34501DE35") || strings.Contains(stored[1], "52998224725") || !strings.Contains(stored[2], "cobsv[2].devedor.cpf") {
		t.Fatalf("prepared: %s", strings.Join(stored, "\n"))
	}
	if m.takeHandOff("acc", "7") != nil {
		t.Fatal("a hand-off is used once")
	}
}

// A new batch PUT without a batch delay (processed by its PUT,
// lote_now.go) ends as the same batch, charges and claim rows as the same
// PUT with a delay followed by the worker's processLote: created and
// denied items (a key sent twice, an invalid devedor, a key not the
// account's), a txid a denied item of another batch claimed first.
func TestPutLoteNowSameAsWorker(t *testing.T) {
	ctx := context.Background()
	key := "" // the account's key, once made
	item := func(i int, extra string) string {
		return fmt.Sprintf(`{"txid":"nowvsworker%018d","calendario":{"dataDeVencimento":"2030-06-30"},"valor":{"original":"%d.00"},"chave":"KEY"%s}`, i, 10+i, extra)
	}
	first := `{"cobsv":[` + item(9, `,"devedor":{"cpf":"111","nome":"Inválido"}`) + `]}`
	body := `{"descricao":"Mensalidades","cobsv":[` + strings.Join([]string{
		item(1, `,"devedor":{"cpf":"52998224725","nome":"Fulano"}`),
		item(2, `,"devedor":{"cpf":"52998224725","nome":"A"},"devedor":{"cnpj":"12ABC34501DE35","nome":"B"}`),
		item(3, `, "devedor" : { "cpf": "111",`+"\n\t"+`"nome":"Inválido" }`),
		strings.Replace(item(4, `,"devedor":{"cpf":"52998224725","nome":"Fulano"}`), "KEY", "outra@example.com", 1),
		item(9, `,"devedor":{"cpf":"52998224725","nome":"Agora válido"}`),
	}, ",") + `]}`
	type state struct {
		lote    string
		charges map[string]string
		claims  map[string]string
		queued  int
	}
	run := func(delay time.Duration) state {
		m, ai := newAccountModule(t, delay)
		key = ai.Keys[0]
		put := func(id, b string) {
			b = strings.ReplaceAll(b, "KEY", key)
			if e := m.putLote(ctx, ai, id, "sandbox.local", []byte(b)); e != nil {
				t.Fatalf("delay %v: PUT %s: %+v", delay, id, e.p)
			}
			if delay > 0 {
				if err := m.processLote(ctx, ai.ID, id); err != nil {
					t.Fatal(err)
				}
			}
		}
		put("1", first)
		m.clk.(*clock.Fake).Advance(time.Second)
		put("2", body)
		var s state
		s.queued = len(m.queue)
		raw, err := m.st.GetRaw(ctx, storeLote, ai.ID, "2")
		if err != nil {
			t.Fatal(err)
		}
		s.lote = strings.ReplaceAll(string(raw), key, "KEY")
		s.charges, s.claims = map[string]string{}, map[string]string{}
		for i := range 10 {
			txid := fmt.Sprintf("nowvsworker%018d", i)
			if raw, err := m.st.GetRaw(ctx, storeCharge, ai.ID, txid); err != nil {
				t.Fatal(err)
			} else if raw != nil {
				s.charges[txid] = strings.ReplaceAll(string(raw), key, "KEY")
			}
			if a, ok, err := m.st.GetAlias(ctx, idxClaim, ai.ID, txid); err != nil {
				t.Fatal(err)
			} else if ok {
				s.claims[txid] = a.Owner
			}
		}
		return s
	}
	worker, now := run(time.Hour), run(0)
	if now.queued != 0 {
		t.Fatalf("a batch processed by its PUT queued %d tasks", now.queued)
	}
	if now.lote != worker.lote {
		t.Fatalf("batch:\nby its PUT %s\nby the worker %s", now.lote, worker.lote)
	}
	if fmt.Sprint(now.charges) != fmt.Sprint(worker.charges) || fmt.Sprint(now.claims) != fmt.Sprint(worker.claims) {
		t.Fatalf("by its PUT:\n%v\n%v\nby the worker:\n%v\n%v", now.charges, now.claims, worker.charges, worker.claims)
	}
	// What both must be (not only the same): items 1, 2 and 9 created,
	// 3 and 4 denied and claimed by batch 2.
	want := map[string]string{"nowvsworker000000000000000003": "2", "nowvsworker000000000000000004": "2"}
	if len(now.charges) != 3 || now.charges["nowvsworker000000000000000009"] == "" || fmt.Sprint(now.claims) != fmt.Sprint(want) {
		t.Fatalf("charges %v claims %v", now.charges, now.claims)
	}
	for _, s := range []string{`"status":"CRIADA"`, `"status":"NEGADA"`, `"dev":"12ABC34501DE35"`, `cobsv[2].devedor.cpf`, `cobsv[3].chave`, `"descricao":"Mensalidades"`} {
		if !strings.Contains(now.lote, s) {
			t.Fatalf("batch lacks %s: %s", s, now.lote)
		}
	}
	if strings.Contains(now.lote, "EM_PROCESSAMENTO") {
		t.Fatalf("batch still processing: %s", now.lote)
	}
}

// Loc ids handed out from blocks (reserveLocs) by two modules over one
// store (two instances over one database), concurrently and between
// loc ids taken one at a time in write transactions (allocLocs, as PUT
// /v2/cobv does), are never handed out twice, and a module made later (a
// restart) starts after every block reserved before.
func TestReserveLocsUnique(t *testing.T) {
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	newModule := func() *Module {
		m := &Module{st: st, clk: clock.Real{}, queued: map[task]bool{}}
		m.initCaches()
		return m
	}
	a, b := newModule(), newModule()
	var mu sync.Mutex
	seen := map[int64]string{}
	take := func(who string, first int64, n int) {
		mu.Lock()
		defer mu.Unlock()
		for id := first; id < first+int64(n); id++ {
			if id <= 0 {
				t.Errorf("%s: loc id %d", who, id)
			}
			if prev, dup := seen[id]; dup {
				t.Errorf("loc id %d handed out to %s and %s", id, prev, who)
			}
			seen[id] = who
		}
	}
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			for i := range 40 {
				m, who := a, "a"
				if (g+i)%2 == 1 {
					m, who = b, "b"
				}
				n := 1 + (i*337+g*91)%1000
				first, err := m.reserveLocs(ctx, n)
				if err != nil {
					t.Error(err)
					return
				}
				take(who, first, n)
				if err := st.Tx(ctx, func(tx *store.Tx) error {
					first, err := allocLocs(tx, 1)
					if err == nil {
						take("allocLocs", first, 1)
					}
					return err
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var most int64
	for id := range seen {
		most = max(most, id)
	}
	first, err := newModule().reserveLocs(ctx, 1)
	if err != nil || first <= most || first <= a.locEnd || first <= b.locEnd {
		t.Fatalf("after a restart: %d, %v (highest so far %d, blocks to %d and %d)", first, err, most, a.locEnd, b.locEnd)
	}
	if len(seen) != 3*40+sumSizes() {
		t.Fatalf("%d loc ids handed out", len(seen))
	}
}

// sumSizes is the loc ids TestReserveLocsUnique takes from blocks.
func sumSizes() int {
	n := 0
	for g := range 3 {
		for i := range 40 {
			n += 1 + (i*337+g*91)%1000
		}
	}
	return n
}

// newAccountModule returns a module over a fresh in-memory store (closed
// when the test ends), with a fake clock, the batch delay given and one
// account, and that account's info (its Pix keys).
func newAccountModule(t *testing.T, delay time.Duration) (*Module, accountInfo) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewFake(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	as, err := auth.New(ctx, st, auth.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := as.CreateAccount(ctx, "Conta")
	if err != nil {
		t.Fatal(err)
	}
	m := &Module{st: st, clk: clk, auth: as, delay: delay, queued: map[task]bool{}}
	m.initCaches()
	ai, ok := m.account(acc.ID)
	if !ok {
		t.Fatalf("account %s unknown to the module", acc.ID)
	}
	return m, ai
}
