package pix

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/rules"
)

// The typed path of a batch's PUT (lote_fast.go) against the reference
// path (parseLoteHead, then checkCobRaw of each item's map): on generated
// valid items and on every mutation of each of their parts, the same
// refusal of the body, or the same batch (each item's status, problema
// with its violations, and request), the same checked input and the same
// stored charge for every item.

// jv is an ordered JSON value for the generator: jobj, []any, string,
// jnum (a number's text), bool or nil.
type (
	jobj []jkv
	jkv  struct {
		k string
		v any
	}
	jnum string
)

// jsonText writes v; esc writes strings with their non-ASCII characters
// and some letters as \u escapes.
func jsonText(b *strings.Builder, v any, esc bool, r *rand.Rand) {
	ws := func() {
		if r != nil && r.IntN(8) == 0 {
			b.WriteString(" \n\t"[:1+r.IntN(3)])
		}
	}
	switch x := v.(type) {
	case jobj:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			q, _ := json.Marshal(m.k)
			b.Write(q)
			ws()
			b.WriteByte(':')
			ws()
			jsonText(b, m.v, esc, r)
			ws()
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			jsonText(b, e, esc, r)
		}
		b.WriteByte(']')
	case string:
		if !esc {
			q, _ := json.Marshal(x)
			b.Write(q)
			return
		}
		b.WriteByte('"')
		for _, c := range x {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteRune(c)
			case c < 0x20 || c > 0x7e || c == 'a' || c == '1':
				if c > 0xffff {
					b.WriteRune(c)
				} else {
					fmt.Fprintf(b, `\u%04x`, c)
				}
			default:
				b.WriteRune(c)
			}
		}
		b.WriteByte('"')
	case jnum:
		b.WriteString(string(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("jsonText: %T", v))
	}
}

func encodeJV(v any, esc bool, r *rand.Rand) string {
	var b strings.Builder
	jsonText(&b, v, esc, r)
	return b.String()
}

// genItem is a valid batch item (but for the check digits and the dates
// some of them get wrong: checks beyond the schema), its keys shuffled.
func genItem(r *rand.Rand, i int) jobj {
	pick := func(ss ...string) string { return ss[r.IntN(len(ss))] }
	money := func() string { return fmt.Sprintf("%d.%02d", 1+r.IntN(99999), r.IntN(100)) }
	date := func(month int) string { return fmt.Sprintf("2030-%02d-%02d", month, 1+r.IntN(28)) }
	dev := jobj{{"nome", pick("Fulano de Tal", "Ça Ñandú Ü", "A", strings.Repeat("é", 200), "名前 テスト", "x\ty")}}
	switch r.IntN(5) {
	case 0:
		dev = append(dev, jkv{"cnpj", pick("11222333000181", "12ABC34501DE35", "11222333000100")})
	case 1:
		dev = append(dev, jkv{"cpf", pick("52998224725", "11144477735")}, jkv{"cnpj", "11222333000181"})
	default:
		dev = append(dev, jkv{"cpf", pick("52998224725", "11144477735", "12345678900")})
	}
	for _, f := range []jkv{{"email", pick("a@b.com", "pagador@exemplo.com.br", "sem-arroba")}, {"logradouro", "Rua das Flores, 12"},
		{"cidade", pick("São Paulo", "Rio")}, {"uf", pick("SP", "RJ", "XX")}, {"cep", "01310100"}} {
		if r.IntN(2) == 0 {
			dev = append(dev, f)
		}
	}
	cal := jobj{{"dataDeVencimento", date(6 + r.IntN(2))}}
	if r.IntN(2) == 0 {
		cal = append(cal, jkv{"validadeAposVencimento", jnum(strconv.Itoa(r.IntN(90)))})
	}
	if r.IntN(30) == 0 {
		cal[0].v = "2030-02-30" // no such day
	}
	val := jobj{{"original", money()}}
	mod := func(max int) jobj {
		return jobj{{"modalidade", jnum(strconv.Itoa(1 + r.IntN(max)))}, {"valorPerc", pick("2.00", "1.50", "0.33", "150.00")}}
	}
	if r.IntN(2) == 0 {
		val = append(val, jkv{"multa", mod(2)})
	}
	if r.IntN(3) == 0 {
		val = append(val, jkv{"juros", mod(8)})
	}
	if r.IntN(4) == 0 {
		val = append(val, jkv{"abatimento", mod(2)})
	}
	if r.IntN(3) == 0 {
		m := 1 + r.IntN(6)
		d := jobj{{"modalidade", jnum(strconv.Itoa(m))}}
		if m <= 2 {
			var fixas []any
			for k := range 1 + r.IntN(4) { // 4: more than the schema's 3
				fixas = append(fixas, jobj{{"data", date(1 + k)}, {"valorPerc", pick("1.00", "0.50")}})
			}
			d = append(d, jkv{"descontoDataFixa", fixas})
		} else {
			d = append(d, jkv{"valorPerc", pick("0.10", "2.00")})
		}
		val = append(val, jkv{"desconto", d})
	}
	item := jobj{{"txid", fmt.Sprintf("fasttxid%020d", i)}, {"calendario", cal}, {"devedor", dev}, {"valor", val},
		{"chave", pick("minha@example.com", "MINHA@example.com", "alheia@example.com")}}
	if r.IntN(2) == 0 {
		item = append(item, jkv{"solicitacaoPagador", pick("", "Mensalidade", strings.Repeat("ã", 140))})
	}
	if r.IntN(3) == 0 {
		var infos []any
		for range r.IntN(3) {
			infos = append(infos, jobj{{"nome", "Campo"}, {"valor", "Valor ç"}})
		}
		if infos == nil {
			infos = []any{}
		}
		item = append(item, jkv{"infoAdicionais", infos})
	}
	shuffle(r, item)
	return item
}

func shuffle(r *rand.Rand, o jobj) {
	r.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
	for _, m := range o {
		if x, ok := m.v.(jobj); ok {
			shuffle(r, x)
		}
	}
}

// clone copies v deeply.
func clone(v any) any {
	switch x := v.(type) {
	case jobj:
		out := make(jobj, len(x))
		for i, m := range x {
			out[i] = jkv{m.k, clone(m.v)}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// jvEqual is reflect.DeepEqual on jv values (a nil array or object is
// not an empty one), without reflect: the test asks it of every
// mutation, most of which leave the item as it was, and reflect under
// -race took a fifth of the test's time.
func jvEqual(a, b any) bool {
	switch x := a.(type) {
	case jobj:
		y, ok := b.(jobj)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if x[i].k != y[i].k || !jvEqual(x[i].v, y[i].v) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !jvEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case string, jnum, bool, nil:
		return a == b
	}
	panic(fmt.Sprintf("jvEqual: %T", a))
}

// mutations are the changes made to each part of an item: each returns
// the part's new value, or drop (the member removed) and dup (the member
// sent twice, the second time with the value returned).
type mutation struct {
	name string
	f    func(v any) any
	dup  bool
}

var drop = &struct{}{}

// grow adds n copies of an array's first element.
func grow(n int) func(any) any {
	return func(v any) any {
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return v
		}
		out := clone(a).([]any)
		for range n {
			out = append(out, clone(a[0]))
		}
		return out
	}
}

// growTo makes an array n elements long, with copies of its first.
func growTo(n int) func(any) any {
	return func(v any) any {
		if a, ok := v.([]any); ok && len(a) > 0 && len(a) < n {
			return grow(n - len(a))(v)
		}
		return v
	}
}

func mutations() []mutation {
	str := func(f func(s string) any) func(any) any {
		return func(v any) any {
			if s, ok := v.(string); ok {
				return f(s)
			}
			return v
		}
	}
	num := func(n string) func(any) any {
		return func(v any) any {
			if _, ok := v.(jnum); ok {
				return jnum(n)
			}
			return v
		}
	}
	return []mutation{
		{name: "removed", f: func(any) any { return drop }},
		{name: "null", f: func(any) any { return nil }},
		{name: "number", f: func(any) any { return jnum("7") }},
		{name: "string", f: func(any) any { return "x" }},
		{name: "object", f: func(any) any { return jobj{} }},
		{name: "array", f: func(any) any { return []any{} }},
		{name: "bool", f: func(any) any { return true }},
		{name: "dup same", f: func(v any) any { return clone(v) }, dup: true},
		{name: "dup other", f: func(any) any { return "outro" }, dup: true},
		{name: "dup smaller", f: func(v any) any {
			if o, ok := v.(jobj); ok && len(o) > 1 {
				return clone(o[1:])
			}
			return clone(v)
		}, dup: true},
		{name: "one more element", f: grow(1)},
		{name: "50 elements", f: growTo(50)},
		{name: "51 elements", f: growTo(51)},
		{name: "empty", f: str(func(string) any { return "" })},
		{name: "long", f: str(func(s string) any { return s + strings.Repeat("a", 201) })},
		{name: "long unicode 201", f: str(func(string) any { return strings.Repeat("ç", 201) })},
		{name: "unicode 77", f: str(func(string) any { return strings.Repeat("ç", 77) })},
		{name: "control", f: str(func(s string) any { return s + "\x01" })},
		{name: "newline", f: str(func(s string) any { return "\n" + s })},
		{name: "del", f: str(func(s string) any { return s + "\x7f" })},
		{name: "invalid utf8", f: str(func(s string) any { return s + "\xff" })},
		{name: "space", f: str(func(s string) any { return s + " " })},
		{name: "digit more", f: str(func(s string) any { return s + "1" })},
		{name: "digit less", f: str(func(s string) any {
			if s == "" {
				return s
			}
			return s[:len(s)-1]
		})},
		{name: "lower", f: str(func(s string) any { return strings.ToLower(s) })},
		{name: "fullwidth digit", f: str(func(s string) any { return "１" + s })},
		{name: "float", f: num("1.0")},
		{name: "exp", f: num("1e2")},
		{name: "negative", f: num("-1")},
		{name: "zero", f: num("0")},
		{name: "minus zero", f: num("-0")},
		{name: "huge", f: num("99999999999999999999")},
		{name: "int32+1", f: num("2147483648")},
		{name: "two", f: num("2")},
		{name: "three", f: num("3")},
		{name: "six", f: num("6")},
		{name: "seven", f: num("7")},
		{name: "eight", f: num("8")},
		{name: "nine", f: num("9")},
	}
}

// mutate returns item with mutation mu applied at the member path[0]
// (of the part path[1:] leads to); the unknown key "zz" added when mu is
// nil.
func mutate(v any, path []string, mu *mutation) any {
	v = clone(v)
	o, ok := v.(jobj)
	if !ok {
		if a, ok := v.([]any); ok && len(path) > 0 {
			i, _ := strconv.Atoi(path[0])
			a[i] = mutate(a[i], path[1:], mu)
		}
		return v
	}
	if len(path) == 0 {
		return append(o, jkv{"zz", "desconhecida"})
	}
	for i, m := range o {
		if m.k != path[0] {
			continue
		}
		if len(path) > 1 {
			o[i].v = mutate(m.v, path[1:], mu)
			return o
		}
		if mu == nil {
			o[i].v = mutate(m.v, nil, nil)
			return o
		}
		nv := mu.f(m.v)
		switch {
		case mu.dup:
			return append(o, jkv{m.k, nv})
		case nv == drop:
			return append(o[:i:i], o[i+1:]...)
		}
		o[i].v = nv
		return o
	}
	return o
}

// paths lists the path of every member and element of v.
func paths(v any, prefix []string, out *[][]string) {
	switch x := v.(type) {
	case jobj:
		for _, m := range x {
			p := append(append([]string(nil), prefix...), m.k)
			*out = append(*out, p)
			paths(m.v, p, out)
		}
	case []any:
		for i, e := range x {
			paths(e, append(append([]string(nil), prefix...), strconv.Itoa(i)), out)
		}
	}
}

// objPaths lists the path of every object in v (the item itself first).
func objPaths(v any, prefix []string, out *[][]string) {
	switch x := v.(type) {
	case jobj:
		*out = append(*out, prefix)
		for _, m := range x {
			objPaths(m.v, append(append([]string(nil), prefix...), m.k), out)
		}
	case []any:
		for i, e := range x {
			objPaths(e, append(append([]string(nil), prefix...), strconv.Itoa(i)), out)
		}
	}
}

var fastAI = accountInfo{ID: "acc", Name: "Escola Sandbox Ltda", CNPJ: "12.345.678/0001-95", Keys: []string{"minha@example.com"}}

// compareBatch runs body through both paths and fails on any difference;
// it returns how many items the typed path read.
func compareBatch(t *testing.T, name string, body []byte) int {
	t.Helper()
	ref, eRef := parseLoteHead(body, tLoteInvalido, titleLote)
	got, eGot := parseLotePut(body)
	if (eRef == nil) != (eGot == nil) {
		t.Fatalf("%s: refusal %v, typed path %v\n%s", name, eRef, eGot, body)
	}
	if eRef != nil {
		a, _ := json.Marshal(eRef.p)
		b, _ := json.Marshal(eGot.p)
		if string(a) != string(b) || eRef.status != eGot.status {
			t.Fatalf("%s: refusal\n%s\ntyped path\n%s", name, a, b)
		}
		return 0
	}
	typed := 0
	for _, c := range got.typed {
		if c != nil {
			typed++
		}
	}
	if !reflect.DeepEqual(ref.txids, got.txids) || !reflect.DeepEqual(ref.descricao, got.descricao) {
		t.Fatalf("%s: txids %q descricao %v, typed path %q %v", name, ref.txids, ref.descricao, got.txids, got.descricao)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	fRef, err1 := prepareFresh(fastAI, "9", "pix.example.com", ref, now)
	fGot, err2 := prepareFresh(fastAI, "9", "pix.example.com", got, now)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: prepareFresh %v / %v", name, err1, err2)
	}
	if string(fRef.raw) != string(fGot.raw) {
		t.Fatalf("%s: batch\n%s\ntyped path\n%s", name, fRef.raw, fGot.raw)
	}
	if len(fRef.creates) != len(fGot.creates) {
		t.Fatalf("%s: %d charges, typed path %d", name, len(fRef.creates), len(fGot.creates))
	}
	m := &Module{}
	for k := range fRef.creates {
		a, b := fRef.creates[k], fGot.creates[k]
		if a.i != b.i || !reflect.DeepEqual(a.in, b.in) {
			t.Fatalf("%s: item %d input\n%+v\ntyped path\n%+v", name, a.i, a.in, b.in)
		}
		ca, err1 := newCharge(fastAI, kindCobV, fRef.l.Items[a.i].Txid, a.in, now, 1000+int64(k), "pix.example.com", 1)
		cb, err2 := newCharge(fastAI, kindCobV, fGot.l.Items[b.i].Txid, b.in, now, 1000+int64(k), "pix.example.com", 1)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: newCharge %v / %v", name, err1, err2)
		}
		ra, _ := m.encodeCharge("", "", ca)
		rb, _ := m.encodeCharge("", "", cb)
		if string(ra) != string(rb) || !reflect.DeepEqual(ca, cb) {
			t.Fatalf("%s: charge\n%s\ntyped path\n%s", name, ra, rb)
		}
	}
	return typed
}

func batchOf(items ...string) []byte {
	return []byte(`{"descricao":"lote","cobsv":[` + strings.Join(items, ",") + `]}`)
}

func TestLoteTypedSameAsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	n := 150
	if testing.Short() {
		n = 30
	}
	typed, total, skipped := 0, 0, 0
	// done counts the comparisons of each mutation of each part (the
	// part's path and the mutation's name); every pair is compared on
	// the first firstItems items that have the part, and after that on
	// one item in sample. The first items' every mutation is what shows
	// each part read or refused as the reference does; the sample, on
	// all n generated items, the parts' values and shapes together.
	done := map[string]int{}
	parts := map[string]bool{}
	const firstItems, sample = 2, 40
	for i := range n {
		items := make([]string, 3)
		for k := range items {
			items[k] = encodeJV(genItem(r, 3*i+k), i%7 == 0, r)
		}
		want := 0 // the items that pass the schema: all the typed path must read
		for _, it := range items {
			v, err := decodeAny([]byte(it))
			var vs []Violacao
			if cobvItemS.check("", v, &vs); err == nil && len(vs) == 0 {
				want++
			}
		}
		if got := compareBatch(t, fmt.Sprintf("valid %d", i), batchOf(items...)); got != want || want == 0 {
			t.Fatalf("generated batch %d: %d items by the typed path, want %d\n%s", i, got, want, batchOf(items...))
		}
		typed += 3
		// Every mutation of every part of the middle item.
		base := genItem(r, 3*i+1)
		var ps [][]string
		paths(base, nil, &ps)
		muts := mutations()
		// A mutation meant for another kind of value (a string's on a
		// number, any value's on an object) leaves the item as it was:
		// the same body is compared once (seen), which is all it proves.
		seen, unchanged := map[string]bool{}, false
		for _, p := range ps {
			at := strings.Join(p, ".")
			parts[at] = true
			for mi := range muts {
				// each mutation of each part is compared on the first
				// items that have the part (a rare part, such as a fourth
				// descontoDataFixa, as often as a common one), then on a
				// sample
				pair := at + " " + muts[mi].name
				if done[pair] >= firstItems && r.IntN(sample) != 0 {
					continue
				}
				mv := mutate(base, p, &muts[mi])
				if jvEqual(mv, base) { // not written out again to be found in seen
					if unchanged {
						skipped++
						continue
					}
					unchanged = true
				}
				body := batchOf(items[0], encodeJV(mv, i%5 == 0, nil), items[2])
				if seen[string(body)] {
					skipped++
					continue
				}
				seen[string(body)] = true
				typed += compareBatch(t, pair, body)
				total += 3
				done[pair]++
			}
		}
		var ops [][]string
		objPaths(base, nil, &ops)
		for _, p := range ops {
			pair := strings.Join(p, ".") + " unknown key"
			if done[pair] >= firstItems && r.IntN(sample) != 0 {
				continue
			}
			body := batchOf(items[0], encodeJV(mutate(base, p, nil), false, nil), items[2])
			typed += compareBatch(t, pair, body)
			total += 3
			done[pair]++
		}
	}
	t.Logf("%d mutated batches' items, %d by the typed path, %d mutations of %d parts; %d mutations left a body already compared", total, typed, len(done), len(parts), skipped)
}

// The body's head: each unusual head is refused or read as the reference
// path does.
func TestLoteTypedHead(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	it := func(i int) string { return encodeJV(genItem(r, i), false, nil) }
	txid := func(i int) string { return fmt.Sprintf("fasttxid%020d", i) }
	a, b := it(1), it(2)
	dupTxid := strings.Replace(b, txid(2), txid(1), 1)
	badTxid := strings.Replace(b, txid(2), "curto", 1)
	escKey := strings.Replace(b, `"chave"`, `"\u0063have"`, 1)
	many := make([]string, rules.MaxBatchItems+1)
	for i := range many {
		many[i] = it(i)
	}
	desc := func(v string) string { return `{"descricao":` + v + `,"cobsv":[` + a + `]}` }
	for _, body := range []string{
		`{"cobsv":[` + a + `]}`,
		`{"cobsv":[` + a + `,` + b + `]}`,
		`{"cobsv":[` + b + `,` + a + `]}`, // descending txids
		`{"cobsv":[` + a + `,` + dupTxid + `]}`,
		`{"cobsv":[` + a + `,` + badTxid + `]}`,
		`{"cobsv":[` + a + `,` + escKey + `]}`,
		`{"cobsv":[` + a + `,7]}`,
		`{"cobsv":[` + a + `,null]}`,
		`{"cobsv":[` + a + `,{}]}`,
		`{"cobsv":[]}`,
		`{"cobsv":{}}`,
		`{"cobsv":null}`,
		`{}`,
		`[]`,
		`{"cobsv":[` + a + `]} x`,
		`{"cobsv":[` + a + `]`,
		`{"cobsv":[` + a + `],"cobsv":[` + b + `]}`,
		`{"cobsv":[` + a + `],"outra":1}`,
		`{"\u0063obsv":[` + a + `]}`,
		`{"cobsv":[` + strings.Join(many[:rules.MaxBatchItems], ",") + `]}`,
		`{"cobsv":[` + strings.Join(many, ",") + `]}`,
		desc(`null`), desc(`7`), desc(`""`), desc(`"` + strings.Repeat("ã", 140) + `"`), desc(`"` + strings.Repeat("ã", 141) + `"`),
		desc(`"a\u0001b"`), desc(`"lote"`) + "", `{"descricao":"a","descricao":"b","cobsv":[` + a + `]}`,
	} {
		compareBatch(t, body[:min(len(body), 60)], []byte(body))
	}
}

// The hand-written patterns of lote_fast.go accept exactly what their
// regexps (the schema's) accept, on generated strings near each pattern.
func TestTypedPatternsSameAsRegexps(t *testing.T) {
	cases := []struct {
		re string
		f  func(string) bool
	}{
		{reValor, isValor},
		{`^\d{4}-\d{2}-\d{2}$`, isDate},
		{reTxid, isTxid},
		{`^\d{11}$`, isCPFShape},
		{`^[0-9A-Z]{12}\d{2}$`, isCNPJShape},
		{`^[A-Z]{2}$`, isUFShape},
		{`^\d{8}$`, isCEPShape},
	}
	// The regexps are the schema's: the same text as the schemas use.
	for _, s := range []*schema{valorS(), dateS()} {
		found := false
		for _, c := range cases {
			found = found || c.re == s.pattern.String()
		}
		if !found {
			t.Fatalf("schema pattern %s has no hand-written check", s.pattern)
		}
	}
	alphabet := []string{"0", "1", "9", "a", "z", "A", "Z", "-", ".", " ", "\n", "ç", "١", "_", "/", ":", "@"}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		re := regexp.MustCompile(c.re)
		samples := []string{"", "2030-06-30", "123.45", "0.00", "1234567890.12", "12345678901.12", "52998224725", "11222333000181", "12ABC34501DE35", "SP", "01310100", "1.2", "1.234", ".12"}
		for n := range 40 {
			for range 200 {
				var b strings.Builder
				for range n {
					b.WriteString(alphabet[r.IntN(len(alphabet))])
				}
				samples = append(samples, b.String())
			}
		}
		// Valid strings with one character changed.
		for range 3000 {
			s := []byte(samples[r.IntN(14)])
			if len(s) > 0 {
				s[r.IntN(len(s))] = "0a.-Z\n"[r.IntN(6)]
			}
			samples = append(samples, string(s))
		}
		for _, s := range samples {
			if re.MatchString(s) != c.f(s) {
				t.Fatalf("%s on %q: regexp %v, by hand %v", c.re, s, re.MatchString(s), c.f(s))
			}
		}
	}
}

// textOK is the schema's string check.
func TestTextOKSameAsSchema(t *testing.T) {
	for _, s := range []string{"", "a", "ab", "ç", "çç", "\x01", "a\tb", "a\x7f", "\xff", "\xff\xfe", strings.Repeat("a", 77), strings.Repeat("a", 78), strings.Repeat("ç", 77), strings.Repeat("ç", 78), strings.Repeat("ç", 39)} {
		for _, lim := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {1, 77}, {0, 140}, {2, 77}, {1, 50}} {
			var vs []Violacao
			str(lim[0], lim[1]).check("p", s, &vs)
			if (len(vs) == 0) != textOK(s, lim[0], lim[1]) {
				t.Fatalf("%q in str(%d, %d): schema %v, textOK %v", s, lim[0], lim[1], vs, textOK(s, lim[0], lim[1]))
			}
		}
	}
}
