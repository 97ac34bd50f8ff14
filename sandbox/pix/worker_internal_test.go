package pix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

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
