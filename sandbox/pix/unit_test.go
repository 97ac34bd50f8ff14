package pix

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"remessa/rules"
)

func props(vs []Violacao) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Propriedade)
	}
	return strings.Join(s, ",")
}

func TestSchemaPaths(t *testing.T) {
	cases := []struct {
		body string
		want string
	}{
		{`{"calendario":{"dataDeVencimento":"2030-01-01"},"devedor":{"cpf":"52998224725","nome":"A"},"valor":{"original":"1.00"},"chave":"k"}`, ""},
		{`{}`, "calendario,devedor,valor,chave"},
		{`{"calendario":{"dataDeVencimento":"2030-1-1","x":1},"devedor":{"cpf":52998224725,"nome":"A"},"valor":{"original":"1.00","juros":{"modalidade":0,"valorPerc":"1"}},"chave":"k","y":null}`,
			"calendario.dataDeVencimento,calendario.x,devedor.cpf,valor.juros.modalidade,valor.juros.valorPerc,y"},
		{`{"calendario":{"dataDeVencimento":"2030-01-01"},"devedor":{"cpf":"52998224725","nome":"A"},"valor":{"original":"1.00","desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2030-01-01","valorPerc":"1.00"},{"data":5}]}},"chave":"k","infoAdicionais":[{"nome":"a"}]}`,
			"valor.desconto.descontoDataFixa[1].data,valor.desconto.descontoDataFixa[1].valorPerc,infoAdicionais[0].valor"},
		{`[]`, ""},
	}
	for _, tc := range cases {
		v, err := decodeAny([]byte(tc.body))
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		var vs []Violacao
		cobvCreateS.check("", v, &vs)
		got := props(vs)
		if tc.body == `[]` {
			if len(vs) != 1 || vs[0].Propriedade != "" || !strings.Contains(vs[0].Razao, "objeto") {
				t.Fatalf("array body: %+v", vs)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.body, got, tc.want)
		}
	}
	// Prefix for batch items and the cap on violations.
	var vs []Violacao
	cobvItemS.check("cobsv[7]", map[string]any{"txid": "x"}, &vs)
	if !strings.HasPrefix(props(vs), "cobsv[7].txid,cobsv[7].calendario") {
		t.Fatalf("prefix: %s", props(vs))
	}
	many := map[string]any{}
	for i := 0; i < 200; i++ {
		many[fmt.Sprintf("k%03d", i)] = i
	}
	vs = nil
	cobvCreateS.check("", many, &vs)
	if len(vs) != maxViolacoes {
		t.Fatalf("cap: %d", len(vs))
	}
}

func TestDecodeAny(t *testing.T) {
	for _, bad := range []string{``, `{`, `{} {}`, `{"a":1}x`, "\xff"} {
		if _, err := decodeAny([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	v, err := decodeAny([]byte(`{"n":12345678901234567890}`))
	if err != nil || v.(map[string]any)["n"].(json.Number).String() != "12345678901234567890" {
		t.Fatalf("numbers stay exact: %v %v", v, err)
	}
}

func TestCheckCobSemantics(t *testing.T) {
	own := func(k string) bool { return k == "minha@example.com" }
	base := func() map[string]any {
		v, _ := decodeAny([]byte(`{"calendario":{"dataDeVencimento":"2030-06-30"},"devedor":{"cnpj":"12ABC34501DE35","nome":"Empresa"},"valor":{"original":"100.00"},"chave":"minha@example.com"}`))
		return v.(map[string]any)
	}
	in, vs := checkCob(base(), cobvCreateS, kindCobV, "", own)
	if len(vs) != 0 || in.Cents != 10000 || *in.Body.Calendario.ValidadeAposVencimento != 30 {
		t.Fatalf("alphanumeric CNPJ: %+v %+v", in, vs)
	}
	set := func(path string, val any) map[string]any {
		m := base()
		parts := strings.Split(path, ".")
		cur := m
		for _, p := range parts[:len(parts)-1] {
			next, ok := cur[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[p] = next
			}
			cur = next
		}
		cur[parts[len(parts)-1]] = val
		return m
	}
	desc := func(mod int, extra string) any {
		v, _ := decodeAny([]byte(fmt.Sprintf(`{"modalidade":%d%s}`, mod, extra)))
		return v
	}
	cases := []struct {
		m    map[string]any
		prop string
	}{
		{set("valor.original", "0.00"), "valor.original"},
		{set("chave", "outra@example.com"), "chave"},
		{set("valor.desconto", desc(2, `,"descontoDataFixa":[{"data":"2030-06-01","valorPerc":"100.01"}]`)), "valor.desconto.descontoDataFixa[0].valorPerc"},
		{set("valor.desconto", desc(1, `,"descontoDataFixa":[{"data":"2030-06-01","valorPerc":"1.00"},{"data":"2030-05-01","valorPerc":"1.00"}]`)), "valor.desconto.descontoDataFixa[1].data"},
		{set("valor.desconto", desc(1, `,"valorPerc":"1.00","descontoDataFixa":[{"data":"2030-06-01","valorPerc":"1.00"}]`)), "valor.desconto.valorPerc"},
		{set("valor.desconto", desc(5, `,"valorPerc":"100.01"`)), "valor.desconto.valorPerc"},
		{set("valor.desconto", desc(4, `,"valorPerc":"1.00","descontoDataFixa":[{"data":"2030-06-01","valorPerc":"1.00"}]`)), "valor.desconto.descontoDataFixa"},
		{set("valor.multa", desc(1, `,"valorPerc":"100.00"`)), "valor.multa.valorPerc"},
		{set("devedor.email", "não é e-mail"), "devedor.email"},
	}
	for i, tc := range cases {
		_, vs := checkCob(tc.m, cobvCreateS, kindCobV, "", own)
		if len(vs) == 0 || vs[0].Propriedade != tc.prop {
			t.Errorf("case %d: %+v, want %s", i, vs, tc.prop)
		}
	}
	// Juros by value may exceed nothing: a daily value above the original is allowed.
	if _, vs := checkCob(set("valor.juros", desc(1, `,"valorPerc":"500.00"`)), cobvCreateS, kindCobV, "", own); len(vs) != 0 {
		t.Fatalf("juros: %+v", vs)
	}
}

func TestMergePatchAndRequestView(t *testing.T) {
	exp := 3600
	c := Cob{Txid: "t", Status: StatusAtiva, Revisao: 2, Calendario: Calendario{Criacao: "x", Expiracao: &exp},
		Devedor: &Pessoa{CPF: "52998224725", Nome: "A"}, Valor: Valor{Original: "1.00"}, Chave: "k", PixCopiaECola: "000201"}
	v := requestView(c, kindCob)
	if _, ok := v["pixCopiaECola"]; ok || v["txid"] != nil || v["status"] != nil {
		t.Fatalf("request view keeps answer fields: %v", v)
	}
	var vs []Violacao
	cobCreateS.check("", v, &vs)
	if len(vs) != 0 {
		t.Fatalf("request view is not a valid request: %+v", vs)
	}
	p, _ := decodeAny([]byte(`{"devedor":{"nome":"B"},"valor":{"original":"2.00"},"solicitacaoPagador":"oi"}`))
	m := mergePatch(v, p.(map[string]any))
	d := m["devedor"].(map[string]any)
	if d["nome"] != "B" || d["cpf"] != "52998224725" || m["valor"].(map[string]any)["original"] != "2.00" || m["solicitacaoPagador"] != "oi" {
		t.Fatalf("merge: %v", m)
	}
	if m2 := mergePatch(nil, map[string]any{"a": nil, "b": 1}); len(m2) != 1 {
		t.Fatalf("null deletes: %v", m2)
	}
}

func TestHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/hook":             "https://example.com/hook/pix",
		"https://example.com/hook/":            "https://example.com/hook/pix",
		"https://example.com":                  "https://example.com/pix",
		"https://example.com/h?ignorar=":       "https://example.com/h?ignorar=",
		"https://example.com/h?token=1":        "https://example.com/h/pix?token=1",
		"http://127.0.0.1:9/x?a=1&ignorar=sim": "http://127.0.0.1:9/x?a=1&ignorar=sim",
	} {
		if got := webhookTarget(in); got != want {
			t.Errorf("webhookTarget(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"/split/repasses/1/valor":            "split.repasses[1].valor",
		"/split/divisaoTarifa":               "split.divisaoTarifa",
		"/split/repasses/0/favorecido/conta": "split.repasses[0].favorecido.conta",
		"":                                   "",
	} {
		if got := pointerToPath(in); got != want {
			t.Errorf("pointerToPath(%q) = %q", in, got)
		}
	}
	if hostOf("https://127.0.0.1:8443/") != "127.0.0.1:8443" || hostOf("localhost:1") != "localhost:1" {
		t.Fatal("hostOf")
	}
	loc := locationFor("127.0.0.1:65535", "acc000001", kindCobV, 12345, false)
	if len(loc) != len("127.0.0.1:65535/v2/cobv/")+32 || loc == locationFor("127.0.0.1:65535", "acc000002", kindCobV, 12345, false) {
		t.Fatalf("location %q", loc)
	}
	if l := locationFor(strings.Repeat("h", 80), "a", kindCob, 1, true); len(l) > 77 {
		t.Fatalf("long host: %d", len(l))
	}
	// Ordered locations: 32 hex digits that sort as the loc ids do, unique
	// per account; the older form for loc ids before the threshold.
	o1, o2 := locationFor("h", "acc1", kindCobV, 9, true), locationFor("h", "acc1", kindCobV, 10, true)
	if len(o1) != len("h/v2/cobv/")+32 || locKey(o1) >= locKey(o2) || !strings.HasPrefix(locKey(o2), "000000000000000a") ||
		o2 == locationFor("h", "acc2", kindCobV, 10, true) || o2 == locationFor("h", "acc1", kindCobV, 10, false) {
		t.Fatalf("ordered locations %q %q", o1, o2)
	}
	for _, tc := range []struct {
		loc, from int64
		ordered   bool
	}{{9, 10, false}, {10, 10, true}, {11, 10, true}, {5, 0, false}} {
		c := &charge{Kind: kindCobV, LocID: tc.loc, Host: "h"}
		if err := c.derive(accountInfo{ID: "acc1", Name: "Conta"}, "t", tc.from); err != nil {
			t.Fatal(err)
		}
		if want := locationFor("h", "acc1", kindCobV, tc.loc, tc.ordered); c.Body.Location != want || c.Body.Loc.Location != want {
			t.Fatalf("loc %d from %d: %q, want %q", tc.loc, tc.from, c.Body.Location, want)
		}
	}
	if merchantName("Conta com um nome bem comprido demais LTDA") != "Conta com um nome bem com" {
		t.Fatalf("merchant %q", merchantName("Conta com um nome bem comprido demais LTDA"))
	}
	now := time.Date(2026, 11, 22, 3, 4, 0, 0, time.UTC)
	if got := rules.NewEndToEndID('E', rules.EfiISPB, now, seqID("SBX", 1)); got != "E09089356202611220304SBX00000001" || !rules.ValidEndToEndID(got) {
		t.Fatalf("e2e %q", got)
	}
	if s := seqID("SBX", 36*36*36*36*36*36*36*36+35); len(s) != 11 || s != "SBX0000000Z" {
		t.Fatalf("seq wrap %q", s)
	}
	if ts(time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.FixedZone("x", -3*3600))) != "2026-01-02T06:04:05.006Z" {
		t.Fatal("ts")
	}
}

func TestParseList(t *testing.T) {
	q := func(s string) url.Values { v, _ := url.ParseQuery(s); return v }
	lq, e := parseList(q("inicio=2026-01-01T00:00:00Z&fim=2026-01-02T00:00:00-03:00&paginacao.paginaAtual=2&paginacao.itensPorPagina=10"), false)
	if e != nil || lq.page != 2 || lq.size != 10 || lq.params.Fim != "2026-01-02T03:00:00.000Z" {
		t.Fatalf("%+v %v", lq, e)
	}
	lo, hi := lq.window(25)
	if lo != 20 || hi != 25 || lq.params.Paginacao.QuantidadeDePaginas != 3 || lq.params.Paginacao.QuantidadeTotalDeItens != 25 {
		t.Fatalf("window %d %d %+v", lo, hi, lq.params.Paginacao)
	}
	lq.page = 9
	if lo, hi := lq.window(25); lo != 25 || hi != 25 {
		t.Fatalf("past the end %d %d", lo, hi)
	}
	lq, _ = parseList(q("inicio=2026-01-01T00:00:00Z&fim=2026-01-01T00:00:00Z"), false)
	if lq.size != 100 {
		t.Fatal("default size")
	}
	for s, prop := range map[string]string{
		"fim=2026-01-01T00:00:00Z":                                                        "inicio",
		"inicio=2026-01-01&fim=2026-01-02T00:00:00Z":                                      "inicio",
		"inicio=2026-01-02T00:00:00Z&fim=2026-01-01T00:00:00Z":                            "fim",
		"inicio=2026-01-01T00:00:00Z&fim=2026-01-01T00:00:00Z&paginacao.paginaAtual=-1":   "paginacao.paginaAtual",
		"inicio=2026-01-01T00:00:00Z&fim=2026-01-01T00:00:00Z&paginacao.itensPorPagina=0": "paginacao.itensPorPagina",
	} {
		_, e := parseList(q(s), false)
		if e == nil || e.status != 400 || e.p.Violacoes[0].Propriedade != prop {
			t.Errorf("%s: %+v", s, e)
		}
		_, e = parseList(q(s), true)
		if e == nil || !e.efi || e.nome != "valor_invalido" || !strings.Contains(e.mensagem, prop) {
			t.Errorf("efi %s: %+v", s, e)
		}
	}
}

// checkCobRaw decodes the struct from the request's bytes only when that
// gives what decoding the checked map would: the same input, violations
// and struct as checkCob for every body, a key sent twice included.
func TestCheckCobRawSameAsMap(t *testing.T) {
	own := func(k string) bool { return k == "minha@example.com" }
	const head = `"calendario":{"dataDeVencimento":"2030-06-30"},"valor":{"original":"100.00"},"chave":"minha@example.com"`
	bodies := []string{
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"Fulano"}}`,
		`{` + head + `,"txid":"abcdefghijklmnopqrstuvwxyz1","devedor":{"cpf":"52998224725","nome":"Fulano"}}`,
		// the second devedor replaces the first (a struct would merge them)
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"A"},"devedor":{"cnpj":"12ABC34501DE35","nome":"B"}}`,
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"A","nome":"B"}}`,
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"a \"quoted\": colon\\"},"solicitacaoPagador":"x:y"}`,
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"Fulano","email":null}}`,
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"Fulano"},"infoAdicionais":[{"nome":"a","valor":"b"},{"nome":"c","valor":"d"}]}`,
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"Fulano"},"valor":{"original":"5.00","multa":{"modalidade":2,"valorPerc":"2.00"}}}`,
		`{` + head + `,"devedor":{"cpf":"52998224725","nome":"Fulano"},"valor":{"original":"5.00","multa":{"modalidade":1e0,"valorPerc":"2.00"}}}`,
		`{` + head + `,"devedor":{"cpf":"111","nome":"Fulano"}}`,
		`{` + head + `,"devedor":"x"}`,
	}
	for _, b := range bodies {
		v1, err := decodeAny([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		v2, _ := decodeAny([]byte(b))
		in1, vs1 := checkCob(v1, cobvCreateS, kindCobV, "", own)
		in2, vs2 := checkCobRaw([]byte(b), v2, cobvCreateS, kindCobV, "", own)
		j1, _ := json.Marshal([]any{in1, vs1})
		j2, _ := json.Marshal([]any{in2, vs2})
		if string(j1) != string(j2) {
			t.Errorf("%s:\nmap %s\nraw %s", b, j1, j2)
		}
	}
	for raw, want := range map[string]int{`{}`: 0, `[]`: 0, `{"a":{"b":1,"c":[{"d":":"}]}}`: 4, `{"a\":":"\\:"}`: 1} {
		if got := jsonMembers([]byte(raw)); got != want {
			t.Errorf("jsonMembers(%s) = %d, want %d", raw, got, want)
		}
	}
}

// splitCobsv finds a batch body's items as decoding it would, or says it
// cannot.
func TestSplitCobsv(t *testing.T) {
	for _, body := range []string{
		`{"cobsv":[{"txid":"a"},{"txid":"b","x":[1,{"y":"]},"}],"n":null}]}`,
		`{"descricao":"com \"aspas\", vírgulas: e ]}","cobsv":[{"a":1}],"z":true}`,
		`{"cobsv":[{"a":1}],"cobsv":[{"b":2},{"c":"\\"}]}`,
		`{"x":12.5e3,"cobsv":[{}],"y":[[],{}],"w":false}`,
		`{"cobsv":[]}`,
		`{"cobsv":[1,"dois",null,[3]]}`,
	} {
		var want struct{ Cobsv []json.RawMessage }
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := splitCobsv([]byte(body))
		if !ok || fmt.Sprintf("%s", got) != fmt.Sprintf("%s", want.Cobsv) {
			t.Errorf("%s: %v %s, want %s", body, ok, got, want.Cobsv)
		}
	}
	for _, body := range []string{`{"\u0063obsv":[{}]}`, `{"descricao":"x"}`, `{"cobsv":{}}`, `[]`} {
		if got, ok := splitCobsv([]byte(body)); ok {
			t.Errorf("%s: %s, want not ok", body, got)
		}
	}
	raws, _ := splitCobsv([]byte(`{"cobsv":[{"a":1},{"b":2}]}`))
	_ = append(raws[0], 'x')
	if string(raws[1]) != `{"b":2}` {
		t.Fatalf("an append to one item changed the next: %s", raws[1])
	}
}

// parseLoteBody keeps each item as sent, compacted, whitespace and all
// inside strings.
func TestParseLoteBodyRaws(t *testing.T) {
	body := "{ \"descricao\" : \"d\" ,\n \"cobsv\" : [ { \"txid\" : \"abcdefghijklmnopqrstuvwxyz1\" , \"x\" : \"a  b\" } ,\n\t{\"txid\":\"abcdefghijklmnopqrstuvwxyz2\",\"y\":[ 1 , 2 ]} ] }"
	lb, e := parseLoteBody([]byte(body), tLoteInvalido, titleLote)
	if e != nil {
		t.Fatal(e.p)
	}
	if len(lb.raws) != 2 || string(lb.raws[0]) != `{"txid":"abcdefghijklmnopqrstuvwxyz1","x":"a  b"}` || string(lb.raws[1]) != `{"txid":"abcdefghijklmnopqrstuvwxyz2","y":[1,2]}` {
		t.Fatalf("%s", lb.raws)
	}
}
