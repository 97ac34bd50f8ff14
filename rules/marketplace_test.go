package rules

import (
	"math/rand/v2"
	"strings"
	"testing"
)

const (
	own  = "ffffffffffffffffffffffffffffffff"
	pA   = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	pB   = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	pC   = "cccccccccccccccccccccccccccccccc"
	bad  = "not-a-payee-code"
	item = "Mensalidade"
)

func mp(mode int, rs ...Repasse) *Marketplace { return &Marketplace{Mode: mode, Repasses: rs} }

func TestCheckMarketplaceRules(t *testing.T) {
	plain := SplitItem{Name: "Taxa", ValueCents: 1000, Amount: 1}
	cases := []struct {
		name      string
		items     []SplitItem
		shippings []SplitShipping
		rule      string
		pointer   string
	}{
		{"rule 1: zero-value item in a split charge", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 1000})}, {Name: "Brinde", ValueCents: 0}},
			nil, "marketplace.1", "/items/1/value"},
		{"rule 1: negative item in a charge split by shipping", []SplitItem{{Name: item, ValueCents: -5}},
			[]SplitShipping{{Name: "Frete", ValueCents: 500, PayeeCode: pA}}, "marketplace.1", "/items/0/value"},
		{"rule 1: negative amount", []SplitItem{{Name: item, ValueCents: 100, Amount: -2, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 1000})}},
			nil, "marketplace.1", "/items/0/amount"},
		{"rule 2: unknown mode", []SplitItem{plain, {Name: item, ValueCents: 1000, Marketplace: mp(3, Repasse{PayeeCode: pA, Percentage: 1000})}},
			nil, "marketplace.2", "/items/1/marketplace/mode"},
		{"rule 3: fixed with mode 2", []SplitItem{{Name: item, ValueCents: 5000, Marketplace: mp(2, Repasse{PayeeCode: pA, Fixed: 1500})}},
			nil, "marketplace.3", "/items/0/marketplace/mode"},
		{"rule 3: fixed with default mode", []SplitItem{{Name: item, ValueCents: 5000, Marketplace: mp(0, Repasse{PayeeCode: pA, Fixed: 1500})}},
			nil, "marketplace.3", "/items/0/marketplace/mode"},
		{"rule 4: percentages above 100%", []SplitItem{{Name: item, ValueCents: 5000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 6000}, Repasse{PayeeCode: pB, Percentage: 4001})}},
			nil, "marketplace.4", "/items/0/marketplace/repasses"},
		{"rule 5: fixed above item total", []SplitItem{{Name: item, ValueCents: 1000, Amount: 2, Marketplace: mp(1, Repasse{PayeeCode: pA, Fixed: 1500}, Repasse{PayeeCode: pB, Fixed: 501})}},
			nil, "marketplace.5", "/items/0/marketplace/repasses"},
		{"rule 5: percentage plus fixed above item total", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(1, Repasse{PayeeCode: pA, Fixed: 600}, Repasse{PayeeCode: pB, Percentage: 5000})}},
			nil, "marketplace.5", "/items/0/marketplace/repasses"},
		{"rule 6: marketplace without repasses", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2)}},
			nil, "marketplace.6", "/items/0/marketplace/repasses"},
		{"rule 7: shipping passed on with no value", []SplitItem{plain},
			[]SplitShipping{{Name: "Frete", ValueCents: 0, PayeeCode: pA}}, "marketplace.7", "/shippings/0/value"},
		{"rule 8: payee_code malformed", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 100}, Repasse{PayeeCode: bad, Percentage: 100})}},
			nil, "marketplace.8", "/items/0/marketplace/repasses/1/payee_code"},
		{"rule 8: payee_code missing", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{Percentage: 100})}},
			nil, "marketplace.8", "/items/0/marketplace/repasses/0/payee_code"},
		{"rule 8: shipping payee_code malformed", []SplitItem{plain},
			[]SplitShipping{{Name: "Frete", ValueCents: 100}, {Name: "Frete 2", ValueCents: 100, PayeeCode: bad}}, "marketplace.8", "/shippings/1/payee_code"},
		{"rule 8: both percentage and fixed", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(1, Repasse{PayeeCode: pA, Percentage: 100, Fixed: 100})}},
			nil, "marketplace.8", "/items/0/marketplace/repasses/0"},
		{"rule 8: repasse to the issuing account", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: strings.ToUpper(own), Percentage: 100})}},
			nil, "marketplace.8", "/items/0/marketplace/repasses/0/payee_code"},
		{"rule 9: zero percent", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 0})}},
			nil, "marketplace.9", "/items/0/marketplace/repasses/0/percentage"},
		{"rule 9: negative percent", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: -100})}},
			nil, "marketplace.9", "/items/0/marketplace/repasses/0/percentage"},
		{"rule 9: negative fixed", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(1, Repasse{PayeeCode: pA, Fixed: -100})}},
			nil, "marketplace.9", "/items/0/marketplace/repasses/0/fixed"},
		{"rule 10: same account twice in one item", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 100}, Repasse{PayeeCode: pB, Percentage: 100}, Repasse{PayeeCode: strings.ToUpper(pA), Percentage: 200})}},
			nil, "marketplace.10", "/items/0/marketplace/repasses/2/payee_code"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vs := CheckMarketplace(c.items, c.shippings, own)
			if len(vs) != 1 {
				t.Fatalf("got %d violations, want exactly 1: %+v", len(vs), vs)
			}
			v := vs[0]
			if v.Rule != c.rule || v.Pointer != c.pointer {
				t.Fatalf("got %s at %s, want %s at %s (%s)", v.Rule, v.Pointer, c.rule, c.pointer, v.Message)
			}
			if v.Message == "" || v.MessageEN == "" || v.Message == v.MessageEN {
				t.Fatalf("messages: pt %q en %q", v.Message, v.MessageEN)
			}
		})
	}
}

func TestCheckMarketplaceMessages(t *testing.T) {
	vs := CheckMarketplace([]SplitItem{{Name: item, ValueCents: 5000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 6000}, Repasse{PayeeCode: pB, Percentage: 4050})}}, nil, own)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "100,50%") || !strings.Contains(vs[0].MessageEN, "100.50%") {
		t.Fatalf("%+v", vs)
	}
	vs = CheckMarketplace([]SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(1, Repasse{PayeeCode: pA, Fixed: 1001})}}, nil, own)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "R$ 10,01") || !strings.Contains(vs[0].Message, "R$ 10,00") {
		t.Fatalf("%+v", vs)
	}
}

func TestCheckMarketplaceAccepts(t *testing.T) {
	cases := []struct {
		name      string
		items     []SplitItem
		shippings []SplitShipping
	}{
		{"no split at all, zero item left to the charge rules", []SplitItem{{Name: item, ValueCents: 0}}, nil},
		{"shipping to own account is not a split", []SplitItem{{Name: item, ValueCents: 0}}, []SplitShipping{{Name: "Frete", ValueCents: 100, PayeeCode: own}}},
		{"mixed items (rule 1)", []SplitItem{{Name: "Taxa", ValueCents: 100}, {Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 2500})}}, nil},
		{"exactly 100% (rule 4)", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(1, Repasse{PayeeCode: pA, Percentage: 7500}, Repasse{PayeeCode: pB, Percentage: 2500})}}, nil},
		{"fixed equal to total with mode 1 (rules 3, 5)", []SplitItem{{Name: item, ValueCents: 1000, Amount: 3, Marketplace: mp(1, Repasse{PayeeCode: pA, Fixed: 3000})}}, nil},
		{"same account in several items (rules 6, 10)", []SplitItem{
			{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 1000})},
			{Name: item, ValueCents: 2000, Marketplace: mp(1, Repasse{PayeeCode: pA, Fixed: 500}, Repasse{PayeeCode: pB, Percentage: 1000})}}, nil},
		{"whole shipping to a payee (rule 7)", []SplitItem{{Name: item, ValueCents: 1000}}, []SplitShipping{{Name: "Frete", ValueCents: 990, PayeeCode: pC}}},
		{"no own code known", []SplitItem{{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: own, Percentage: 1000})}}, nil},
	}
	for _, c := range cases {
		ownCode := own
		if strings.HasPrefix(c.name, "no own") {
			ownCode = ""
		}
		if vs := CheckMarketplace(c.items, c.shippings, ownCode); len(vs) != 0 {
			t.Errorf("%s: unexpected %+v", c.name, vs)
		}
	}
}

func TestCheckMarketplaceReportsAll(t *testing.T) {
	items := []SplitItem{
		{Name: item, ValueCents: 1000, Marketplace: mp(2, Repasse{PayeeCode: pA, Fixed: 100}, Repasse{PayeeCode: pA, Percentage: 0})},
	}
	vs := CheckMarketplace(items, []SplitShipping{{ValueCents: -1, PayeeCode: bad}}, own)
	got := map[string]bool{}
	for _, v := range vs {
		got[v.Rule+" "+v.Pointer] = true
	}
	for _, want := range []string{
		"marketplace.8 /shippings/0/payee_code",
		"marketplace.7 /shippings/0/value",
		"marketplace.10 /items/0/marketplace/repasses/1/payee_code",
		"marketplace.9 /items/0/marketplace/repasses/1/percentage",
		"marketplace.3 /items/0/marketplace/mode",
	} {
		if !got[want] {
			t.Errorf("missing %s in %+v", want, vs)
		}
	}
	if len(vs) != 5 {
		t.Errorf("got %d violations, want 5: %+v", len(vs), vs)
	}
}

func shareMap(ss []Share) map[string]int64 {
	m := map[string]int64{}
	for _, s := range ss {
		if s.Own {
			m["own"] += s.Cents
		} else {
			m[s.PayeeCode] += s.Cents
		}
	}
	return m
}

func TestSplitShares(t *testing.T) {
	items := []SplitItem{
		// 10000: 25% = 2500 to A; 33.33% = 3333 to B; own 4167.
		{Name: "a", ValueCents: 10000, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 2500}, Repasse{PayeeCode: pB, Percentage: 3333})},
		// 999 x 3 = 2997: 33.33% = floor(998.9001) = 998 to A (uppercase code, same account); own 1999.
		{Name: "b", ValueCents: 999, Amount: 3, Marketplace: mp(2, Repasse{PayeeCode: strings.ToUpper(pA), Percentage: 3333})},
		// 5000 with R$ 15,00 fixed to C; own 3500.
		{Name: "c", ValueCents: 5000, Marketplace: mp(1, Repasse{PayeeCode: pC, Fixed: 1500})},
		// no split: all 700 to own.
		{Name: "d", ValueCents: 350, Amount: 2},
	}
	ships := []SplitShipping{{Name: "frete C", ValueCents: 1234, PayeeCode: pC}, {Name: "frete próprio", ValueCents: 66}}
	got := SplitShares(items, ships)
	if !got[0].Own || got[0].PayeeCode != "" {
		t.Fatalf("first share must be own: %+v", got)
	}
	want := map[string]int64{"own": 4167 + 1999 + 3500 + 700 + 66, pA: 2500 + 998, pB: 3333, pC: 1500 + 1234}
	m := shareMap(got)
	if len(got) != 4 {
		t.Fatalf("got %d shares (%+v), want 4", len(got), got)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s: got %d, want %d (all %+v)", k, m[k], v, got)
		}
	}
	if got[1].PayeeCode != pA || got[2].PayeeCode != pB || got[3].PayeeCode != pC {
		t.Errorf("order of first appearance: %+v", got)
	}
}

func TestSplitSharesInvalidInputClamped(t *testing.T) {
	items := []SplitItem{{Name: "x", ValueCents: 1000, Marketplace: mp(1, Repasse{PayeeCode: pA, Percentage: 8000}, Repasse{PayeeCode: pB, Fixed: 5000})}}
	m := shareMap(SplitShares(items, nil))
	if m[pA] != 800 || m[pB] != 200 || m["own"] != 0 {
		t.Fatalf("%+v", m)
	}
	// Overflowing value x amount: nothing is paid out of it, no panic.
	items = []SplitItem{{Name: "x", ValueCents: 1 << 62, Amount: 4, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 100})}}
	if ss := SplitShares(items, nil); len(ss) != 1 || ss[0].Cents != 0 {
		t.Fatalf("%+v", ss)
	}
	// Big but valid totals do not overflow in total x percentage.
	items = []SplitItem{{Name: "x", ValueCents: 1 << 60, Marketplace: mp(2, Repasse{PayeeCode: pA, Percentage: 5000})}}
	if m := shareMap(SplitShares(items, nil)); m[pA] != 1<<59 || m["own"] != 1<<59 {
		t.Fatalf("%+v", m)
	}
}

// Property: on valid random input the shares add up exactly to the charge
// total, every repasse gets at most its exact share, and own gets the rest.
func TestSplitSharesConserve(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	payees := []string{pA, pB, pC}
	for range 2000 {
		var items []SplitItem
		var total int64
		for range 1 + r.IntN(4) {
			it := SplitItem{Name: "i", ValueCents: 1 + r.Int64N(100000), Amount: 1 + r.Int64N(5)}
			total += it.ValueCents * it.Amount
			if r.IntN(2) == 0 {
				left := int64(10000)
				m := &Marketplace{Mode: 1}
				for _, p := range payees[:1+r.IntN(3)] {
					if left == 0 {
						break
					}
					pc := 1 + r.Int64N(left)
					left -= pc
					m.Repasses = append(m.Repasses, Repasse{PayeeCode: p, Percentage: pc})
				}
				it.Marketplace = m
			}
			items = append(items, it)
		}
		ships := []SplitShipping{{ValueCents: 1 + r.Int64N(1000), PayeeCode: payees[r.IntN(3)]}}
		total += ships[0].ValueCents
		if vs := CheckMarketplace(items, ships, own); len(vs) != 0 {
			t.Fatalf("generator made invalid input: %+v", vs)
		}
		var sum int64
		for _, s := range SplitShares(items, ships) {
			if s.Cents < 0 {
				t.Fatalf("negative share %+v", s)
			}
			sum += s.Cents
		}
		if sum != total {
			t.Fatalf("shares sum %d, total %d", sum, total)
		}
	}
}
