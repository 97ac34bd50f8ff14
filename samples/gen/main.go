// Command gen writes the sample spreadsheets under samples/ so they can be
// reproduced: go run ./samples/gen (from the module root). The data is
// synthetic and deterministic: valid CPFs and CNPJs computed from a fixed
// seed, accented Brazilian names, and a few CPFs and CEPs stored as numbers
// that lost their leading zeros (validate restores them with a warning).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"

	"remessa/formats/fixtures"
)

var first = []string{"Maria", "José", "Ana", "João", "Antônio", "Francisca", "Luís", "Márcia", "Conceição", "Sebastião", "Lúcia", "Inês", "Vinícius", "Débora", "Caio", "Beatriz", "Letícia", "Otávio", "Júlia", "Flávio", "Cláudia", "Rogério", "Patrícia", "Mônica", "André"}
var last = []string{"Silva", "Conceição", "Araújo", "Gonçalves", "Simões", "Magalhães", "Brandão", "Assunção", "Guimarães", "Sá", "Lima", "Ribeiro", "Falcão", "Damião", "Peçanha", "Estêvão", "Sousa", "Nóbrega", "Magno", "Fontes"}
var streets = []string{"Rua das Flores", "Avenida Paulista", "Rua São João", "Travessa Açucena", "Rua Pará", "Alameda Santos", "Rua Grão-Pará", "Avenida Brasil"}
var hoods = []string{"Centro", "Jardim América", "Vila Mariana", "Boa Viagem", "Savassi", "Moinhos de Vento"}

type city struct{ name, uf, cepPrefix string }

var cities = []city{{"São Paulo", "SP", "01"}, {"Campinas", "SP", "13"}, {"Rio de Janeiro", "RJ", "20"}, {"Belo Horizonte", "MG", "30"}, {"Salvador", "BA", "40"}, {"Recife", "PE", "50"}, {"Fortaleza", "CE", "60"}, {"Brasília", "DF", "70"}, {"Curitiba", "PR", "80"}, {"Porto Alegre", "RS", "90"}, {"Osasco", "SP", "06"}}

// cpf returns a valid CPF (11 digits) from r; when zero is true the first
// digit is 0, so a spreadsheet storing it as a number drops it.
func cpf(r *rand.Rand, zero bool) string {
	d := make([]int, 11)
	for {
		for i := 0; i < 9; i++ {
			d[i] = r.IntN(10)
		}
		if zero {
			d[0] = 0
		} else if d[0] == 0 {
			d[0] = 1 + r.IntN(9)
		}
		same := true
		for i := 1; i < 9; i++ {
			same = same && d[i] == d[0]
		}
		if !same {
			break
		}
	}
	for k := 9; k <= 10; k++ {
		sum := 0
		for i := 0; i < k; i++ {
			sum += d[i] * (k + 1 - i)
		}
		dv := sum % 11
		if dv < 2 {
			dv = 0
		} else {
			dv = 11 - dv
		}
		d[k] = dv
	}
	var b strings.Builder
	for _, x := range d {
		b.WriteByte(byte('0' + x))
	}
	return b.String()
}

func fmtCPF(s string) string { return s[:3] + "." + s[3:6] + "." + s[6:9] + "-" + s[9:] }

func name(r *rand.Rand) string {
	return first[r.IntN(len(first))] + " " + last[r.IntN(len(last))] + " " + last[r.IntN(len(last))]
}

func cep(r *rand.Rand, c city) string {
	return c.cepPrefix + fmt.Sprintf("%03d%03d", r.IntN(1000), r.IntN(1000))
}

func email(n string, i int) string {
	s := strings.ToLower(strings.Fields(n)[0])
	s = strings.NewReplacer("á", "a", "â", "a", "ã", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o", "õ", "o", "ú", "u", "ç", "c").Replace(s)
	return fmt.Sprintf("%s.%d@example.com", s, i)
}

func phone(r *rand.Rand) string {
	return fmt.Sprintf("(%d%d) 9%04d-%04d", 1+r.IntN(9), 1+r.IntN(9), r.IntN(10000), r.IntN(10000))
}

func main() {
	dir := flag.String("dir", "samples", "samples directory")
	big := flag.String("big", "", "instead, write big benchmark inputs (1,000,000-row CSV, 100,000-row XLSX) and their jobs to this directory")
	flag.Parse()
	if *big != "" {
		must(writeBig(*big))
		return
	}
	must(escola(filepath.Join(*dir, "escola", "alunos.xlsx")))
	must(mensal(filepath.Join(*dir, "mensal", "pagadores.csv")))
	must(boletos(filepath.Join(*dir, "boletos", "clientes.csv")))
	must(split(filepath.Join(*dir, "split", "pedidos.xlsx")))
	must(pixsplit(filepath.Join(*dir, "split", "associados.csv")))
}

// writeBig writes the benchmark inputs of docs/job-file.md: a 1,000,000-row
// pt-BR CSV (Windows-1252, ";") and a 100,000-row XLSX with the fixtures'
// 12 columns, and a cobv job for each (the e-mail is the row key).
func writeBig(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := fixtures.WriteBigCSV(filepath.Join(dir, "big1m.csv"), 1_000_000, true); err != nil {
		return err
	}
	if err := fixtures.WriteBigXLSX(filepath.Join(dir, "big100k.xlsx"), 100_000); err != nil {
		return err
	}
	for _, f := range []string{"big1m.csv", "big100k.xlsx"} {
		job := fmt.Sprintf("version: 1\ninput: {file: %s, key: email}\nissue:\n  cobv:\n    chave: financeiro@example.com\n    multa: {modalidade: 2, valor: 2%%}\n", f)
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(f, filepath.Ext(f))+".yaml"), []byte(job), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// escola: 40 students, one carnet each (12 monthly parcels set by the job).
func escola(path string) error {
	r := rand.New(rand.NewPCG(2027, 1))
	f := excelize.NewFile()
	defer f.Close()
	sheet := "Alunos"
	f.SetSheetName("Sheet1", sheet)
	headers := []string{"Matrícula", "Aluno", "Turma", "Responsável", "CPF", "E-mail", "Telefone", "Logradouro", "Número", "Bairro", "CEP", "Cidade", "UF", "Mensalidade"}
	for i, h := range headers {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		f.SetCellStr(sheet, cell, h)
	}
	turmas := []string{"1º ano A", "2º ano B", "3º ano A", "5º ano C", "9º ano A"}
	valores := []float64{850, 920.5, 980, 1120.75, 1350}
	for i := 0; i < 40; i++ {
		row := i + 2
		set := func(col int, v any) {
			cell, _ := excelize.CoordinatesToCellName(col, row)
			f.SetCellValue(sheet, cell, v)
		}
		t := r.IntN(len(turmas))
		c := cities[r.IntN(len(cities))]
		resp := name(r)
		doc := cpf(r, i%10 == 3) // every 10th starts with 0
		set(1, fmt.Sprintf("2027-%03d", i+1))
		set(2, first[r.IntN(len(first))]+" "+strings.Fields(resp)[2])
		set(3, turmas[t])
		set(4, resp)
		if i%10 == 3 {
			n, _ := strconv.ParseInt(doc, 10, 64)
			set(5, n) // stored as a number: the leading zero is lost
		} else {
			set(5, fmtCPF(doc))
		}
		set(6, email(resp, i))
		set(7, phone(r))
		set(8, streets[r.IntN(len(streets))])
		set(9, strconv.Itoa(1+r.IntN(2000)))
		set(10, hoods[r.IntN(len(hoods))])
		z := cep(r, c)
		if c.cepPrefix[0] == '0' && i%2 == 0 {
			n, _ := strconv.Atoi(z)
			set(11, n)
		} else {
			set(11, z[:5]+"-"+z[5:])
		}
		set(12, c.name)
		set(13, c.uf)
		set(14, valores[t])
	}
	style, _ := f.NewStyle(&excelize.Style{NumFmt: 4}) // #,##0.00
	f.SetColStyle(sheet, "N", style)
	return save(f, path)
}

func save(f *excelize.File, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := f.SaveAs(path); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

// mensal: 2,500 payers in a pt-BR Excel CSV (Windows-1252, ";", decimal
// comma), monthly due-date Pix charges in three batches.
func mensal(path string) error {
	r := rand.New(rand.NewPCG(2027, 2))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer out.Close()
	w := bufio.NewWriter(charmap.Windows1252.NewEncoder().Writer(out))
	fmt.Fprint(w, "Código;Nome;CPF;E-mail;Logradouro;Cidade;UF;CEP;Valor;Descrição\r\n")
	for i := 0; i < 2500; i++ {
		n := name(r)
		doc := cpf(r, i%50 == 7)
		c := cities[r.IntN(len(cities))]
		docText := fmtCPF(doc)
		if i%50 == 7 {
			docText = strings.TrimLeft(doc, "0") // what Excel leaves of a CPF typed as a number
		}
		cents := 4990 + r.IntN(50000)
		valor := fmt.Sprintf("%d,%02d", cents/100, cents%100)
		if cents >= 100000 {
			valor = fmt.Sprintf("%d.%03d,%02d", cents/100000, (cents/100)%1000, cents%100)
		}
		z := cep(r, c)
		fmt.Fprintf(w, "C%05d;%s;%s;%s;%s, %d;%s;%s;%s-%s;%s;Mensalidade associação\r\n",
			i+1, n, docText, email(n, i), streets[r.IntN(len(streets))], 1+r.IntN(999), c.name, c.uf, z[:5], z[5:], valor)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return out.Close()
}

// boletos: 25 customers in a UTF-8 CSV with BOM and "," separators, one
// slip each with its own due date and value.
func boletos(path string) error {
	r := rand.New(rand.NewPCG(2027, 3))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\ufeffid,nome,cpf_cnpj,email,telefone,rua,numero,bairro,cep,cidade,uf,valor,descricao,vencimento\n")
	for i := 0; i < 25; i++ {
		n := name(r)
		c := cities[r.IntN(len(cities))]
		z := cep(r, c)
		cents := 1500 + r.IntN(90000)
		fmt.Fprintf(&b, "B-%03d,%s,%s,%s,%s,%s,%d,%s,%s,%s,%s,\"%d,%02d\",Serviço de manutenção,+%dd\n",
			i+1, n, fmtCPF(cpf(r, false)), email(n, i), phone(r), streets[r.IntN(len(streets))], 1+r.IntN(999),
			hoods[r.IntN(len(hoods))], z[:5]+"-"+z[5:], c.name, c.uf, cents/100, cents%100, 0)
	}
	// the due date comes from the job ("+15d"); the column is left out
	s := strings.ReplaceAll(b.String(), ",vencimento\n", "\n")
	s = strings.ReplaceAll(s, ",+0d\n", "\n")
	return os.WriteFile(path, []byte(s), 0o644)
}

// split: 30 marketplace orders (XLSX), each a slip whose item value is
// shared with a seller (percentage per row) and a platform (fixed 10%).
func split(path string) error {
	r := rand.New(rand.NewPCG(2027, 4))
	f := excelize.NewFile()
	defer f.Close()
	sheet := "Pedidos"
	f.SetSheetName("Sheet1", sheet)
	headers := []string{"Pedido", "Cliente", "CPF", "E-mail", "Produto", "Valor", "Comissão do vendedor", "Vendedor"}
	for i, h := range headers {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		f.SetCellStr(sheet, cell, h)
	}
	sellers := []string{"a1b2c3d4e5f60718293a4b5c6d7e8f90", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "abcdefabcdefabcdefabcdefabcdef12"}
	products := []string{"Cadeira ergonômica", "Mesa de escritório", "Luminária", "Estante", "Poltrona"}
	for i := 0; i < 30; i++ {
		row := i + 2
		set := func(col int, v any) {
			cell, _ := excelize.CoordinatesToCellName(col, row)
			f.SetCellValue(sheet, cell, v)
		}
		n := name(r)
		set(1, fmt.Sprintf("P%04d", 1001+i))
		set(2, n)
		set(3, fmtCPF(cpf(r, false)))
		set(4, email(n, i))
		set(5, products[r.IntN(len(products))])
		set(6, float64(10000+r.IntN(200000))/100)
		set(7, fmt.Sprintf("%d%%", 50+5*r.IntN(7)))
		set(8, sellers[r.IntN(len(sellers))])
	}
	return save(f, path)
}

// pixsplit: 12 association members paying a due-date Pix charge split
// between the association and two federations.
func pixsplit(path string) error {
	r := rand.New(rand.NewPCG(2027, 5))
	var b strings.Builder
	b.WriteString("Código;Nome;CPF;Valor\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "S%03d;%s;%s;%d,00\n", i+1, name(r), fmtCPF(cpf(r, false)), 100+10*r.IntN(20))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
