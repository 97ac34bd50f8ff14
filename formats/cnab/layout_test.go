package cnab

import (
	"strings"
	"testing"
)

// TestLayouts loads every embedded table and checks each names its manual
// and places the fields the reader depends on where the manuals print them.
func TestLayouts(t *testing.T) {
	names := Names()
	for _, want := range []string{"febraban240-remessa", "febraban240-retorno", "bradesco400-remessa", "itau400-remessa", "bradesco400-retorno", "itau400-retorno"} {
		l, err := Get(want)
		if err != nil {
			t.Fatalf("%s: %v (have %v)", want, err, names)
		}
		if l.Manual.Title == "" || l.Manual.Version == "" || l.Manual.Date == "" {
			t.Errorf("%s: manual %+v", want, l.Manual)
		}
	}
	for _, c := range []struct {
		layout, rec, field string
		start, end         int
	}{
		{"febraban240-remessa", "3P", "vencimento", 78, 85},
		{"febraban240-remessa", "3P", "valor", 86, 100},
		{"febraban240-remessa", "3P", "seu_numero", 63, 77},
		{"febraban240-remessa", "3Q", "sacado_nome", 34, 73},
		{"febraban240-remessa", "3R", "multa_valor", 75, 89},
		{"febraban240-remessa", "0", "nsa", 158, 163},
		{"febraban240-retorno", "3U", "valor_pago", 78, 92},
		{"bradesco400-remessa", "1", "vencimento", 121, 126},
		{"bradesco400-remessa", "1", "sacado_nome", 235, 274},
		{"itau400-remessa", "1", "sacado_cidade", 335, 349},
		{"itau400-remessa", "2", "multa_valor", 11, 23},
		{"bradesco400-retorno", "1", "valor_pago", 254, 266},
		{"bradesco400-retorno", "1", "movimento", 109, 110},
		{"bradesco400-retorno", "9", "qtd_06", 87, 91},
		{"itau400-retorno", "1", "valor_pago", 254, 266},
		{"itau400-retorno", "1", "motivos", 378, 385},
	} {
		f := MustGet(c.layout).Field(c.rec, c.field)
		if f == nil || f.Start != c.start || f.End != c.end {
			t.Errorf("%s %s.%s: %+v, want %d-%d", c.layout, c.rec, c.field, f, c.start, c.end)
		}
	}
}

func TestParseLayoutRefuses(t *testing.T) {
	head := "# leiaute;x\n# titulo;t\n# versao;1\n# data;2020\n# tamanho;240\nregistro;campo;nome;inicio;fim;tipo;formato;fixo\n"
	for _, c := range []struct{ body, want string }{
		{"0;a;A;1;10;N;;\n0;b;B;10;12;N;;\n", "overlaps"},
		{"0;a;A;230;241;N;;\n", "outside"},
		{"0;a;A;1;8;N;data6;\n", "data6"},
		{"0;a;A;1;2;N;;123\n", "fixed value"},
		{"0;a;A;1;2;X;;\n", "tipo"},
	} {
		if _, err := ParseLayout([]byte(head + c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v", c.body, err)
		}
	}
}
