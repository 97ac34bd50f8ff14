package pix

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// marshalLote writes what encoding/json writes, on batches of every
// shape: strings to escape (HTML characters, quotes, controls, invalid
// UTF-8, U+2028), times shared or not, in other zones, zero or refused
// by encoding/json, nil items, items with a problema, request or
// revision, empty and nil item lists.
func TestMarshalLoteSameAsJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	strs := []string{"", "abc", "fasttxid00000000000000000001", "a<b>&c", `q"uote\`, "ctl\x01", "bad\xff", "sep\u2028", "ção", "CRIADA"}
	pick := func() string { return strs[r.IntN(len(strs))] }
	now := time.Date(2026, 11, 26, 12, 0, 0, 123456000, time.UTC)
	times := []time.Time{now, now, now, now.Add(time.Nanosecond), {}, now.In(time.FixedZone("BRT", -3*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Now()}
	pickT := func() time.Time { return times[r.IntN(len(times))] }
	hand := 0
	for k := range 3000 {
		l := &lote{ID: pick(), Descricao: pick(), Created: pickT(), Host: pick()}
		if k%3 == 0 {
			l.Created = now
		}
		n := r.IntN(6)
		if k%50 != 0 {
			l.Items = make([]*loteItem, n)
		}
		for i := range l.Items {
			it := &loteItem{Txid: pick(), Status: pick(), Criacao: now, Dev: pick(), Op: pick()}
			switch r.IntN(12) {
			case 0:
				it = nil
			case 1:
				it.Problema = &Problem{Type: "t", Title: "x<y", Status: 400, Violacoes: []Violacao{{Razao: "r", Propriedade: "p"}}}
			case 2:
				it.Req = json.RawMessage(`{"a": "<b>" }`)
			case 3:
				it.Patch = json.RawMessage(`{"x":1}`)
			case 4, 5:
				it.Criacao = pickT()
			}
			l.Items[i] = it
		}
		want, errW := json.Marshal(l)
		got, errG := marshalLote(l)
		if string(want) != string(got) || (errW == nil) != (errG == nil) {
			t.Fatalf("%+v:\nencoding/json %v\n%s\nmarshalLote %v\n%s", l, errW, want, errG, got)
		}
		if _, ok := appendLote(nil, l); ok {
			hand++
		}
	}
	if hand < 500 {
		t.Fatalf("only %d batches written by hand", hand)
	}
}

// BenchmarkMarshalLote: a batch of 1,000 items its PUT created, by
// encoding/json and by marshalLote.
func BenchmarkMarshalLote(b *testing.B) {
	now := time.Now()
	l := &lote{ID: "17", Descricao: "escala", Created: now, Host: "pix.example.com", Items: make([]*loteItem, 1000)}
	for i := range l.Items {
		l.Items[i] = &loteItem{Txid: "abcdefghijklmnopqrstuvwxyz01" + string(rune('A'+i%26)), Status: ItemCriada, Criacao: now, Dev: "52998224725"}
	}
	for _, c := range []struct {
		name string
		f    func(any) ([]byte, error)
	}{{"json", json.Marshal}, {"hand", func(any) ([]byte, error) { return marshalLote(l) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.f(l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// lastKeyMemo answers as the function it remembers, key after key.
func TestLastKeyMemo(t *testing.T) {
	ai := accountInfo{Keys: []string{"minha@example.com", "+5511999998888"}}
	own := lastKeyMemo(ai.ownsKey)
	for _, k := range []string{"", "minha@example.com", "minha@example.com", "MINHA@example.com", "outra@example.com", "outra@example.com", "+5511999998888", "", ""} {
		if got, want := own(k), ai.ownsKey(k); got != want {
			t.Fatalf("%q: %v, ownsKey %v", k, got, want)
		}
	}
}
