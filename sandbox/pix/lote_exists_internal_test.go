package pix

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/store"
)

// A charge created between a new batch's look-up before the write lock
// and its transaction (by PUT /v2/cobv/{txid}, by another batch) is seen
// by the transaction: the batch is refused as if it had been there all
// along, and the charge is left as it was.
func TestPutLoteSeesChargeCreatedAfterPrecheck(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(store.Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := clock.NewFake(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	as, err := auth.New(ctx, st, auth.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := as.CreateAccount(ctx, "Conta")
	if err != nil {
		t.Fatal(err)
	}
	m := &Module{st: st, clk: clk, auth: as, queued: map[task]bool{}}
	m.initCaches()
	ai, _ := m.account(acc.ID)
	key := ai.Keys[0]
	req := func(txid, valor string) string {
		return fmt.Sprintf(`{"txid":%q,"calendario":{"dataDeVencimento":"2030-06-30"},"valor":{"original":%q},"chave":%q,"devedor":{"cpf":"52998224725","nome":"Fulano"}}`, txid, valor, key)
	}
	batch := func(txids ...string) []byte {
		var its []string
		for i, t := range txids {
			its = append(its, req(t, fmt.Sprintf("%d.00", 10+i)))
		}
		return []byte(`{"cobsv":[` + strings.Join(its, ",") + `]}`)
	}
	const a, b, c = "precheckaaaaaaaaaaaaaaaaaaaaa", "precheckbbbbbbbbbbbbbbbbbbbbb", "precheckccccccccccccccccccccc"
	for _, tc := range []struct {
		name   string
		create func()
		batch  []byte
		reason string
	}{
		{"PUT /v2/cobv", func() {
			body := strings.Replace(req(b, "99.00"), `"txid":"`+b+`",`, "", 1)
			if _, e := m.createCharge(ctx, ai, kindCobV, b, "sandbox.local", []byte(body)); e != nil {
				t.Fatalf("create %s: %+v", b, e.p)
			}
		}, batch(a, b), "cobrança criada por PUT /v2/cobv/{txid} não pode entrar em um lote"},
		{"another batch", func() {
			if e := m.putLote(ctx, ai, "2", "sandbox.local", batch(c)); e != nil {
				t.Fatalf("batch 2: %+v", e.p)
			}
		}, batch(a, c), "cobrança já pertence ao lote 2"},
	} {
		m.afterPrecheck = func() {
			m.afterPrecheck = nil
			tc.create()
		}
		e := m.putLote(ctx, ai, "1", "sandbox.local", tc.batch)
		if m.afterPrecheck != nil {
			t.Fatalf("%s: the look-up before the lock did not run", tc.name)
		}
		if e == nil || e.p.Status != 400 || len(e.p.Violacoes) != 1 || e.p.Violacoes[0].Razao != tc.reason || e.p.Violacoes[0].Propriedade != "cobsv[1].txid" {
			if e == nil {
				t.Fatalf("%s: batch 1 accepted", tc.name)
			}
			t.Fatalf("%s: %+v", tc.name, e.p)
		}
		for _, id := range []string{a, "1"} {
			kind := storeCharge
			if id == "1" {
				kind = storeLote
			}
			if raw, err := st.GetRaw(ctx, kind, ai.ID, id); err != nil || raw != nil {
				t.Fatalf("%s: %s %s stored (%v): %s", tc.name, kind, id, err, raw)
			}
		}
	}
	for txid, lote := range map[string]string{b: "", c: "2"} {
		ch, err := m.charges.Get(ctx, ai.ID, txid)
		if err != nil || ch == nil || ch.LoteID != lote {
			t.Fatalf("charge %s: %v %+v", txid, err, ch)
		}
	}
	if ch, _ := m.charges.Get(ctx, ai.ID, b); ch.Cents != 9900 {
		t.Fatalf("charge %s changed: %d cents", b, ch.Cents)
	}
}

// The log of committed charges answers for a look-up only while it holds
// every charge logged since: older look-ups are done again.
func TestCreatedLogBounded(t *testing.T) {
	var l createdLog
	l.add("acc", []string{"x"})
	mark := l.mark()
	l.add("acc", []string{"y"})
	l.add("outra", []string{"z"})
	var got []string
	if !l.since(mark, "acc", func(t string) { got = append(got, t) }) || strings.Join(got, ",") != "y" {
		t.Fatalf("since: %v", got)
	}
	for i := range maxCreatedLog {
		l.add("acc", []string{fmt.Sprint(i)})
	}
	if l.since(mark, "acc", func(string) {}) {
		t.Fatal("a look-up older than the log answered from it")
	}
	if !l.since(l.mark()-maxCreatedLog, "acc", func(string) {}) {
		t.Fatal("a look-up within the log not answered from it")
	}
}
