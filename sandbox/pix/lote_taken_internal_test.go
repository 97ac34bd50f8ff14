package pix

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A new batch with txids that already have charges (one made by PUT
// /v2/cobv, one by another batch; on items it would create, found by the
// insert, and on an item it would deny, looked up) is refused with the
// same problem whether its PUT processes it (no batch delay) or the
// worker would (a delay: every txid looked up), and leaves nothing: not
// the batch, not its other charges, not the charges it met changed.
func TestPutLoteTakenTxids(t *testing.T) {
	ctx := context.Background()
	txid := func(s string) string { return "taken" + strings.Repeat(s, 26-len("taken")) }
	t1, t2, t3, t5, t6 := txid("1"), txid("2"), txid("3"), txid("5"), txid("6")
	run := func(delay time.Duration) []string {
		m, ai := newAccountModule(t, delay)
		item := func(id, cpf, valor string) string {
			return fmt.Sprintf(`{"txid":%q,"calendario":{"dataDeVencimento":"2030-06-30"},"valor":{"original":%q},"chave":%q,"devedor":{"cpf":%q,"nome":"Fulano"}}`, id, valor, ai.Keys[0], cpf)
		}
		for _, id := range []string{t1, t5} {
			body := strings.Replace(item(id, "52998224725", "99.00"), `"txid":"`+id+`",`, "", 1)
			if _, e := m.createCharge(ctx, ai, kindCobV, id, "sandbox.local", []byte(body)); e != nil {
				t.Fatalf("create %s: %+v", id, e.p)
			}
		}
		put := func(id string, items ...string) *apiError {
			e := m.putLote(ctx, ai, id, "sandbox.local", []byte(`{"cobsv":[`+strings.Join(items, ",")+`]}`))
			if e == nil && delay > 0 {
				if err := m.processLote(ctx, ai.ID, id); err != nil {
					t.Fatal(err)
				}
			}
			return e
		}
		if e := put("2", item(t2, "52998224725", "20.00")); e != nil {
			t.Fatalf("batch 2: %+v", e.p)
		}
		var problems []string
		for id, items := range map[string][]string{
			// created items only: t1 and t2 would be created
			"3": {item(t3, "52998224725", "30.00"), item(t1, "52998224725", "31.00"), item(t2, "52998224725", "32.00")},
			// t5 on an item denied (invalid cpf), t6 fine
			"4": {item(t6, "52998224725", "40.00"), item(t5, "111", "41.00")},
			// both
			"5": {item(t5, "111", "50.00"), item(t3, "52998224725", "51.00"), item(t1, "52998224725", "52.00")},
		} {
			e := put(id, items...)
			if e == nil {
				t.Fatalf("delay %v: batch %s accepted", delay, id)
			}
			b, _ := json.Marshal(e.p)
			problems = append(problems, id+" "+strings.ReplaceAll(string(b), ai.Keys[0], "KEY"))
			if l, err := m.rd(ctx).lote(ai.ID, id); err != nil || l != nil {
				t.Fatalf("delay %v: batch %s stored (%v)", delay, id, err)
			}
		}
		for _, id := range []string{t3, t6} {
			if c, err := m.charges.Get(ctx, ai.ID, id); err != nil || c != nil {
				t.Fatalf("delay %v: charge %s created (%v)", delay, id, err)
			}
		}
		for id, want := range map[string]int64{t1: 9900, t5: 9900, t2: 2000} {
			if c, err := m.charges.Get(ctx, ai.ID, id); err != nil || c == nil || c.Cents != want {
				t.Fatalf("delay %v: charge %s: %v %+v", delay, id, err, c)
			}
		}
		// Nothing left behind: the txids refused are free for a batch.
		if e := put("6", item(t3, "52998224725", "60.00"), item(t6, "52998224725", "61.00")); e != nil {
			t.Fatalf("delay %v: batch 6: %+v", delay, e.p)
		}
		for _, id := range []string{t3, t6} {
			if c, err := m.charges.Get(ctx, ai.ID, id); err != nil || c == nil || c.LoteID != "6" {
				t.Fatalf("delay %v: charge %s after batch 6: %v %+v", delay, id, err, c)
			}
		}
		return problems
	}
	now, worker := run(0), run(time.Hour)
	slices.Sort(now)
	slices.Sort(worker)
	if strings.Join(now, "\n") != strings.Join(worker, "\n") {
		t.Fatalf("by its PUT:\n%s\nby the worker:\n%s", strings.Join(now, "\n"), strings.Join(worker, "\n"))
	}
	// What they must be, not only the same.
	for _, want := range []string{
		`3 {"type":"https://pix.bcb.gov.br/api/v2/error/LoteCobVOperacaoInvalida"`,
		`{"razao":"cobrança criada por PUT /v2/cobv/{txid} não pode entrar em um lote","propriedade":"cobsv[1].txid","valor":"` + t1 + `"},{"razao":"cobrança já pertence ao lote 2","propriedade":"cobsv[2].txid","valor":"` + t2 + `"}]`,
		`"razao":"cobrança criada por PUT /v2/cobv/{txid} não pode entrar em um lote","propriedade":"cobsv[1].txid","valor":"` + t5 + `"}]`,
		`"propriedade":"cobsv[0].txid","valor":"` + t5 + `"},{"razao":"cobrança criada por PUT /v2/cobv/{txid} não pode entrar em um lote","propriedade":"cobsv[2].txid","valor":"` + t1 + `"}]`,
	} {
		if !strings.Contains(strings.Join(now, "\n"), want) {
			t.Fatalf("problems lack %s:\n%s", want, strings.Join(now, "\n"))
		}
	}
}
