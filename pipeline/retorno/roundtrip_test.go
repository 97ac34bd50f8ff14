package retorno

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"remessa/formats"
)

// The round trip through an independent implementation of the same
// layouts: @banco-br/nodejs-cnab's record functions over @banco-br/
// cnab_yaml's tables (npm), driven by testdata/cnabnode.js. .ci/run
// installs them outside the repository; nothing is fetched here.

// nodeCNAB returns node and the node_modules folder holding the packages.
// In CI (CI set) a missing one fails the test; elsewhere it skips, saying
// how to install them.
func nodeCNAB(t *testing.T) (string, string) {
	t.Helper()
	modules := os.Getenv("REMESSA_NODE_MODULES")
	if modules == "" {
		home, _ := os.UserHomeDir()
		modules = filepath.Join(home, ".cache", "remessa-node", "node_modules")
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	default:
		for _, p := range []string{"@banco-br/nodejs-cnab/package.json", "@banco-br/cnab_yaml/package.json"} {
			if _, err := os.Stat(filepath.Join(modules, p)); err != nil {
				missing = fmt.Sprintf("%s is not in %s", filepath.Dir(p), modules)
			}
		}
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: the CNAB round trip must run in CI (.ci/run installs @banco-br/nodejs-cnab@0.2.0)", missing)
		}
		t.Skipf("%s: install it as .ci/run does (npm install --prefix ~/.cache/remessa-node @banco-br/nodejs-cnab@0.2.0) or set REMESSA_NODE_MODULES", missing)
	}
	return node, modules
}

func runNode(t *testing.T, args ...string) []byte {
	t.Helper()
	node, modules := nodeCNAB(t)
	cmd := exec.Command(node, append([]string{filepath.Join("testdata", "cnabnode.js")}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, errb.String())
	}
	return out
}

type nodeRecord struct {
	Table  string            `json:"table"`
	Fields map[string]string `json:"fields"`
}

func nodeRead(t *testing.T, layout, content string) []nodeRecord {
	t.Helper()
	p := filepath.Join(t.TempDir(), "RETORNO.RET")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var recs []nodeRecord
	if err := json.Unmarshal(runNode(t, "read", layout, p), &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

// checker compares what the other implementation read with what the test
// expects, naming the record and field.
type checker struct {
	t   *testing.T
	rec int
}

func (c *checker) eq(r nodeRecord, field, want string) {
	c.t.Helper()
	got, ok := r.Fields[field]
	if !ok {
		c.t.Errorf("record %d (%s): nodejs-cnab has no field %s", c.rec, r.Table, field)
		return
	}
	if strings.TrimRight(got, " ") != want {
		c.t.Errorf("record %d (%s) %s: nodejs-cnab reads %q, want %q", c.rec, r.Table, field, got, want)
	}
}

func cents(n int64, w int) string { return fmt.Sprintf("%0*d", w, n) }

// ddmm turns YYYY-MM-DD into DDMMAAAA (long) or DDMMAA.
func ddmm(iso string, long bool) string {
	if iso == "" {
		if long {
			return "00000000"
		}
		return "000000"
	}
	if long {
		return iso[8:10] + iso[5:7] + iso[:4]
	}
	return iso[8:10] + iso[5:7] + iso[2:4]
}

// written are the golden entries the layout writes (with their codes).
func written(layout string) []Entry {
	var out []Entry
	for _, e := range goldenFor(layout) {
		if e.Code != "" {
			out = append(out, e)
		}
	}
	return out
}

// TestRoundTripRetorno240: nodejs-cnab reads remessa's CNAB 240 retorno
// with cnab_yaml's FEBRABAN tables (segments T and U, headers, trailers),
// and every field it reads is the test's own value.
func TestRoundTripRetorno240(t *testing.T) {
	nodeCNAB(t)
	content := writeGolden(t, Layout240, nil, 7)
	recs := nodeRead(t, Layout240, content)
	es := written(Layout240)
	if len(recs) != 4+2*len(es) {
		t.Fatalf("nodejs-cnab read %d records, want %d", len(recs), 4+2*len(es))
	}
	c := &checker{t: t}
	h := recs[0]
	c.eq(h, "codigo_remessa_retorno", "2")
	c.eq(h, "numero_sequencial_arquivo", "000007")
	c.eq(h, "data_geracao", "13022027")
	c.eq(recs[1], "numero_sequencial_arquivo", "00000007")
	var total int64
	for i, e := range es {
		tr, u := recs[2+2*i], recs[3+2*i]
		c.rec = 3 + 2*i
		if tr.Table != "detalhe_segmento_t" || u.Table != "detalhe_segmento_u" {
			t.Fatalf("records %d-%d: %s, %s", c.rec, c.rec+1, tr.Table, u.Table)
		}
		c.eq(tr, "codigo_movimento", e.Code)
		c.eq(tr, "nosso_numero", firstOf(e.NossoNumero, e.ERPNosso))
		c.eq(tr, "numero_documento", e.SeuNumero)
		c.eq(tr, "data_vencimento", ddmm(e.Due, true))
		c.eq(tr, "valor_titulo", cents(e.Value, 15))
		c.eq(tr, "uso_empresa", e.UsoEmpresa)
		c.eq(tr, "numero_inscricao", fmt.Sprintf("%015s", e.PayerDoc))
		c.eq(tr, "nome_sacado", e.Payer)
		c.eq(tr, "identificacao_rejeicao", strings.Join(e.Motivos, ""))
		c.rec++
		c.eq(u, "codigo_movimento", e.Code)
		c.eq(u, "valor_acrescimos", cents(e.FineInterest, 15))
		c.eq(u, "valor_desconto", cents(e.Discount, 15))
		c.eq(u, "valor_abatimento", cents(e.Abatimento, 15))
		c.eq(u, "valor_pago", cents(e.Paid, 15))
		c.eq(u, "valor_liquido", cents(e.Paid, 15))
		c.eq(u, "valor_outros_creditos", cents(e.Over, 15))
		c.eq(u, "data_ocorrencia", ddmm(e.Occurred, true))
		c.eq(u, "data_credito", ddmm(e.Credit, true))
		total += e.Value
	}
	c.rec = len(recs) - 1
	tl, tf := recs[len(recs)-2], recs[len(recs)-1]
	c.eq(tl, "qtde_registro_lote", fmt.Sprintf("%06d", 2+2*len(es)))
	c.eq(tl, "qtde_titulo_cobranca_simples", fmt.Sprintf("%06d", len(es)))
	c.eq(tl, "valor_total_titulo_simples", "00000000000096000") // 960,00: the test's sum of its values
	if total != 96000 {
		t.Errorf("the golden values add up to %d", total)
	}
	c.eq(tf, "qtde_lotes", "000001")
	c.eq(tf, "qtde_registros", fmt.Sprintf("%06d", len(recs)))
}

// TestRoundTripRetorno400 is TestRoundTripRetorno240 for Bradesco's and
// Itaú's CNAB 400 retornos, with cnab_yaml's tables for banks 237 and 341
// laid over its generic CNAB 400 table.
func TestRoundTripRetorno400(t *testing.T) {
	nodeCNAB(t)
	for _, layout := range []string{Layout400Brad, Layout400Itau} {
		t.Run(layout, func(t *testing.T) {
			content := writeGolden(t, layout, nil, 9)
			recs := nodeRead(t, layout, content)
			es := written(layout)
			if len(recs) != 2+len(es) {
				t.Fatalf("nodejs-cnab read %d records, want %d", len(recs), 2+len(es))
			}
			c := &checker{t: t, rec: 1}
			c.eq(recs[0], "codigo_de_retorno", "2")
			c.eq(recs[0], "data_de_geracao", "130227")
			if layout == Layout400Brad {
				c.eq(recs[0], "codigo_do_banco", "237")
				c.eq(recs[0], "numero_aviso_bancario", "00009")
			} else {
				c.eq(recs[0], "codigo_do_banco", "341")
				c.eq(recs[0], "n_seq_arquivo_ret", "00009")
			}
			for i, e := range es {
				r := recs[1+i]
				c.rec = 2 + i
				c.eq(r, "codigo_de_ocorrencia", e.Code)
				c.eq(r, "data_de_ocorrencia", ddmm(e.Occurred, false))
				c.eq(r, "numero_do_documento", e.SeuNumero)
				c.eq(r, "data_vencimento", ddmm(e.Due, false))
				c.eq(r, "valor_do_titulo", cents(e.Value, 13))
				c.eq(r, "valor_abatimento", cents(e.Abatimento, 13))
				c.eq(r, "valor_desconto", cents(e.Discount, 13))
				paid := e.Paid
				if e.Event == EventEstorno {
					paid = e.Refunded
				}
				c.eq(r, "valor_principal", cents(paid, 13))
				c.eq(r, "valor_mora_multa", cents(e.FineInterest, 13))
				c.eq(r, "valor_outros_creditos", cents(e.Over, 13))
				c.eq(r, "data_credito", ddmm(e.Credit, false))
				c.eq(r, "uso_da_empresa", e.UsoEmpresa)
				if layout == Layout400Brad {
					// Bradesco's nosso número is 71-81 and its check digit 82
					nn := fmt.Sprintf("%012s", e.NossoNumero)
					if e.NossoNumero == "" {
						nn = strings.Repeat("0", 12)
					}
					c.eq(r, "nosso_numero", nn[:11])
					c.eq(r, "nosso_numero_dv", nn[11:])
					c.eq(r, "motivo_rejeicao", strings.Join(e.Motivos, ""))
				} else {
					nn := fmt.Sprintf("%08s", e.NossoNumero)
					if e.NossoNumero == "" {
						nn = strings.Repeat("0", 8)
					}
					c.eq(r, "nosso_numero", nn)
					c.eq(r, "nosso_numero_dup", nn)
					c.eq(r, "nome_do_sacado", e.Payer)
					c.eq(r, "erros", strings.Join(e.Motivos, ""))
				}
			}
			tr := recs[len(recs)-1]
			c.rec = len(recs)
			c.eq(tr, "codigo_de_retorno", "2")
			c.eq(tr, "numero_sequencial", fmt.Sprintf("%06d", len(recs)))
			if layout == Layout400Itau {
				c.eq(tr, "qtdede_titulos", fmt.Sprintf("%08d", len(es)))
				c.eq(tr, "valor_total", "00000000096000")
				c.eq(tr, "controle_do_arquivo", "00009")
				c.eq(tr, "qtde_de_detalhes", fmt.Sprintf("%08d", len(es)))
				c.eq(tr, "vlr_total_informado", "00000000096000")
			}
		})
	}
}

// nodeTitle is one title the other implementation writes, in the test's
// terms.
type nodeTitle struct {
	seu, nosso, uso, due, name, doc, street, hood, cep, city, uf string
	cents                                                        int64
}

var nodeTitles = []nodeTitle{
	{seu: "A1", nosso: "11", uso: "ERP-A1", due: "2027-02-10", cents: 15000, name: "MARIA JOSE DA CONCEICAO", doc: "52998224725",
		street: "RUA DAS FLORES, 123", hood: "CENTRO", cep: "01310100", city: "SAO PAULO", uf: "SP"},
	{seu: "B2", nosso: "12", uso: "ERP-B2", due: "2027-03-10", cents: 999, name: "JOSE DA SILVA", doc: "11444777000161",
		street: "AV PAULISTA, 1500", hood: "BELA VISTA", cep: "01310200", city: "SAO PAULO", uf: "SP"},
}

func reais(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

// remessaRecords are the records of a remessa of nodeTitles for
// cnabnode.js, by cnab_yaml's field names.
func remessaRecords(layout string) []map[string]any {
	rec := func(table string, f map[string]string) map[string]any {
		return map[string]any{"table": table, "fields": f}
	}
	kind := func(doc string) string {
		if len(doc) == 14 {
			return "2"
		}
		return "1"
	}
	var out []map[string]any
	switch layout {
	case Layout240:
		out = append(out, rec("header_arquivo", map[string]string{"codigo_banco": "341", "codigo_inscricao": "2", "numero_inscricao": "12345678000195",
			"agencia": "1234", "codigo_cedente": "56789", "nome_empresa": "ESCOLA MODELO LTDA", "nome_banco": "BANCO ITAU SA",
			"codigo_remessa_retorno": "1", "data_geracao": "28112026", "hora_geracao": "101500", "numero_sequencial_arquivo": "5"}))
		out = append(out, rec("header_lote", map[string]string{"codigo_banco": "341", "lote_servico": "1", "tipo_operacao": "R",
			"codigo_inscricao": "2", "numero_inscricao": "12345678000195", "nome_empresa": "ESCOLA MODELO LTDA",
			"numero_sequencial_arquivo": "5", "data_geracao": "28112026"}))
		var total int64
		for i, tt := range nodeTitles {
			out = append(out, rec("detalhe_segmento_p", map[string]string{"codigo_banco": "341", "lote_servico": "1", "numero_sequencial_lote": fmt.Sprint(2*i + 1),
				"codigo_ocorrencia": "1", "agencia": "1234", "codigo_cedente": "56789", "nosso_numero": tt.nosso, "codigo_carteira": "1",
				"numero_documento": tt.seu, "vencimento": ddmm(tt.due, true), "valor_titulo": reais(tt.cents), "especie": "4", "aceite": "N",
				"data_emissao": "28112026", "codigo_juros_mora": "0", "uso_empresa": tt.uso, "codigo_protesto": "3", "codigo_baixa": "0"}))
			out = append(out, rec("detalhe_segmento_q", map[string]string{"codigo_banco": "341", "lote_servico": "1", "numero_sequencial_lote": fmt.Sprint(2*i + 2),
				"codigo_ocorrencia": "1", "sacado_codigo_inscricao": kind(tt.doc), "sacado_numero_inscricao": tt.doc, "nome": tt.name,
				"logradouro": tt.street, "bairro": tt.hood, "cep": tt.cep, "cidade": tt.city, "estado": tt.uf}))
			total += tt.cents
		}
		out = append(out, rec("trailer_lote", map[string]string{"codigo_banco": "341", "lote_servico": "1", "qtde_registro_lote": fmt.Sprint(2 + 2*len(nodeTitles)),
			"qtde_titulo_cobranca_simples": fmt.Sprint(len(nodeTitles)), "valor_total_titulo_simples": reais(total)}))
		out = append(out, rec("trailer_arquivo", map[string]string{"codigo_banco": "341", "qtde_lotes": "1", "qtde_registros": fmt.Sprint(4 + 2*len(nodeTitles))}))
	case Layout400Brad:
		out = append(out, rec("header_arquivo", map[string]string{"codigo_cedente": "4455667", "razao_social": "ESCOLA MODELO LTDA",
			"data_geracao": "28112026", "sequencial_remessa": "5", "numero_sequencial": "1"}))
		for i, tt := range nodeTitles {
			out = append(out, rec("detalhe", map[string]string{"numero_carteira": "9", "agencia": "1234", "conta": "56789", "conta_dv": "0",
				"uso_empresa": tt.uso, "nosso_numero": tt.nosso, "digito_nosso_numero": "0", "numero_documento": tt.seu,
				"vencimento": ddmm(tt.due, false), "valor_titulo": reais(tt.cents), "data_emissao": "28112026",
				"sacado_codigo_inscricao": kind(tt.doc), "sacado_numero_inscricao": tt.doc, "nome": tt.name, "logradouro": tt.street,
				"cep": tt.cep, "numero_sequencial": fmt.Sprint(i + 2)}))
		}
		out = append(out, rec("trailer_arquivo", map[string]string{"numero_sequencial": fmt.Sprint(len(nodeTitles) + 2)}))
	case Layout400Itau:
		out = append(out, rec("header_arquivo", map[string]string{"agencia": "1234", "conta": "56789", "conta_dv": "5", "nome_empresa": "ESCOLA MODELO LTDA",
			"nome_banco": "BANCO ITAU SA", "data_geracao": "28112026", "numero_sequencial": "1"}))
		for i, tt := range nodeTitles {
			out = append(out, rec("detalhe", map[string]string{"codigo_inscricao": "2", "numero_inscricao": "12345678000195", "agencia": "1234",
				"conta": "56789", "conta_dv": "5", "uso_empresa": tt.uso, "nosso_numero": tt.nosso, "numero_carteira": "109", "codigo_carteira": "I",
				"numero_documento": tt.seu, "vencimento": ddmm(tt.due, false), "valor_titulo": reais(tt.cents), "especie": "01", "aceite": "N",
				"data_emissao": "28112026", "sacado_codigo_inscricao": kind(tt.doc), "sacado_numero_inscricao": tt.doc, "nome": tt.name,
				"logradouro": tt.street, "bairro": tt.hood, "cep": tt.cep, "cidade": tt.city, "estado": tt.uf, "numero_sequencial": fmt.Sprint(i + 2)}))
		}
		out = append(out, rec("trailer_arquivo", map[string]string{"numero_sequencial": fmt.Sprint(len(nodeTitles) + 2)}))
	}
	return out
}

// TestRoundTripRemessa: nodejs-cnab writes a remessa of two titles in each
// layout with cnab_yaml's tables; remessa reads it as a job's input does
// (formats), and each title's row holds the test's values.
func TestRoundTripRemessa(t *testing.T) {
	nodeCNAB(t)
	for _, layout := range Layouts {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.json")
			b, _ := json.Marshal(remessaRecords(layout))
			os.WriteFile(in, b, 0o644)
			rem := filepath.Join(dir, "COB.REM")
			runNode(t, "write", layout, in, rem)
			rd, err := formats.Open(rem, formats.Options{})
			if err != nil {
				t.Fatalf("remessa refuses nodejs-cnab's file: %v", err)
			}
			defer rd.Close()
			src := rd.Source()
			col := map[string]int{}
			for i, h := range src.Headers {
				col[h] = i
			}
			for i, tt := range nodeTitles {
				row, err := rd.Next()
				if err != nil {
					t.Fatalf("title %d: %v", i+1, err)
				}
				get := func(h string) string { return row.Cells[col[h]].Value }
				want := map[string]string{formats.CNABKey: tt.seu, formats.CNABName: tt.name, formats.CNABDocument: tt.doc,
					formats.CNABValue: fmt.Sprintf("%d.%02d", tt.cents/100, tt.cents%100), formats.CNABCompanyUse: tt.uso}
				for h, w := range want {
					if g := get(h); g != w {
						t.Errorf("title %d %s: remessa reads %q, want %q", i+1, h, g, w)
					}
				}
				if g := strings.TrimLeft(get(formats.CNABOurNumber), "0"); g != tt.nosso {
					t.Errorf("title %d nosso número: %q, want %q", i+1, g, tt.nosso)
				}
				if g := get(formats.CNABDue); g != tt.due {
					t.Errorf("title %d due: %q, want %s", i+1, g, tt.due)
				}
			}
			if _, err := rd.Next(); err != io.EOF {
				t.Errorf("after the titles: %v", err)
			}
		})
	}
}
