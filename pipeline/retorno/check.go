package retorno

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"remessa/formats/cnab"
)

// Check is a retorno read back: whether its trailers' counts and sums are
// those of its records ("Totais conferem"), and what differs when not.
type Check struct {
	OK       bool     `json:"ok"`
	Titles   int      `json:"titles"`
	Cents    int64    `json:"amount_cents"`
	Problems []string `json:"problems,omitempty"`
}

// CheckFile reads a retorno file of layout back and checks its trailers.
func CheckFile(path, layout string) (Check, error) {
	f, err := os.Open(path)
	if err != nil {
		return Check{}, err
	}
	defer f.Close()
	return CheckReader(f, layout)
}

// CheckReader is CheckFile on a reader.
func CheckReader(r io.Reader, layout string) (Check, error) {
	spec, err := specOf(layout)
	if err != nil {
		return Check{}, err
	}
	l := spec.layout()
	c := Check{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), 4096)
	n := 0
	var batchLines, batches, batchTitles, batchCents int64
	details := int64(0)
	per := map[string]*tally{}
	var paid06 int64
	fail := func(ln *cnab.Line, f *cnab.Field, says, is int64, what string) {
		if says != is {
			c.Problems = append(c.Problems, fmt.Sprintf("%s%s: o trailer diz %d; %s %d", cnab.Where("pt", ln.At(f)), f.Label, says, what, is))
		}
	}
	get := func(ln *cnab.Line, rec, name string) (int64, *cnab.Field) {
		f := l.Field(rec, name)
		if f == nil {
			return 0, nil
		}
		v, e := ln.Int(f)
		if e != nil {
			c.Problems = append(c.Problems, e.Error())
		}
		return v, f
	}
	for sc.Scan() {
		n++
		text := sc.Text()
		if len(text) > 0 && text[len(text)-1] == '\r' {
			text = text[:len(text)-1]
		}
		if len(text) != l.LineLen {
			c.Problems = append(c.Problems, fmt.Sprintf("linha %d: %d caracteres; o leiaute tem %d", n, len(text), l.LineLen))
			continue
		}
		ln := &cnab.Line{N: n, Text: text}
		if l.LineLen == 400 {
			if seq, f := get(ln, text[:1], "sequencial"); f != nil && seq != int64(n) {
				c.Problems = append(c.Problems, fmt.Sprintf("%so registro diz ser o %d.º do arquivo, mas é a linha %d", cnab.Where("pt", ln.At(f)), seq, n))
			}
		}
		switch {
		case l.LineLen == 240:
			switch text[7] {
			case '1':
				batches++
				batchLines, batchTitles, batchCents = 1, 0, 0
			case '3':
				batchLines++
				if text[13] == 'T' {
					v, _ := get(ln, "3T", "valor")
					c.Titles++
					c.Cents += v
					batchTitles++
					batchCents += v
				}
			case '5':
				batchLines++
				if v, f := get(ln, "5", "qtd_registros"); f != nil {
					fail(ln, f, v, batchLines, "o lote tem")
				}
				if v, f := get(ln, "5", "qtd_simples"); f != nil {
					fail(ln, f, v, batchTitles, "os títulos do lote são")
				}
				if v, f := get(ln, "5", "valor_simples"); f != nil {
					fail(ln, f, v, batchCents, "a soma dos títulos do lote é (centavos)")
				}
			case '9':
				if v, f := get(ln, "9", "qtd_registros"); f != nil {
					fail(ln, f, v, int64(n), "o arquivo tem")
				}
				if v, f := get(ln, "9", "qtd_lotes"); f != nil {
					fail(ln, f, v, batches, "os lotes são")
				}
			}
		case text[0] == '1':
			details++
			v, _ := get(ln, "1", "valor")
			mov := text[108:110]
			t := per[mov]
			if t == nil {
				t = &tally{}
				per[mov] = t
			}
			t.n++
			t.cents += v
			if mov == "06" {
				p, _ := get(ln, "1", "valor_pago")
				paid06 += p
			}
			c.Titles++
			c.Cents += v
		case text[0] == '9':
			cnt := func(codes ...string) (int64, int64) {
				var k, s int64
				for _, code := range codes {
					if t := per[code]; t != nil {
						k += int64(t.n)
						s += t.cents
					}
				}
				return k, s
			}
			checks := []struct {
				name, what string
				is         int64
			}{}
			switch spec.name {
			case Layout400Brad:
				q02, v02 := cnt("02")
				q06, v06 := cnt("06")
				q09, v09 := cnt("09", "10")
				q14, v14 := cnt("14")
				q12, v12 := cnt("12")
				q13, v13 := cnt("13")
				checks = append(checks, []struct {
					name, what string
					is         int64
				}{{"qtd_titulos", "os títulos são", int64(c.Titles)}, {"valor_titulos", "a soma dos títulos é (centavos)", c.Cents},
					{"qtd_02", "as ocorrências 02 são", q02}, {"valor_02", "a soma das 02 é", v02},
					{"qtd_06", "as ocorrências 06 são", q06}, {"valor_06", "a soma das 06 é", v06}, {"valor_06_liquidacao", "o pago nas 06 é", paid06},
					{"qtd_09", "as ocorrências 09 e 10 são", q09}, {"valor_09", "a soma das 09 e 10 é", v09},
					{"qtd_14", "as ocorrências 14 são", q14}, {"valor_14", "a soma das 14 é", v14},
					{"qtd_12", "as ocorrências 12 são", q12}, {"valor_12", "a soma das 12 é", v12},
					{"qtd_13", "as ocorrências 13 são", q13}, {"valor_13", "a soma das 13 é", v13}}...)
			case Layout400Itau:
				checks = append(checks, []struct {
					name, what string
					is         int64
				}{{"qtd_simples", "os títulos são", int64(c.Titles)}, {"valor_simples", "a soma dos títulos é (centavos)", c.Cents},
					{"qtd_detalhes", "os registros de transação são", details}, {"valor_detalhes", "a soma dos títulos é (centavos)", c.Cents}}...)
			}
			for _, k := range checks {
				if v, f := get(ln, "9", k.name); f != nil {
					fail(ln, f, v, k.is, k.what)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return c, err
	}
	c.OK = len(c.Problems) == 0
	return c, nil
}
