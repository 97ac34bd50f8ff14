package retorno

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"remessa/formats/cnab"
	"remessa/pipeline/run"
)

// Echo is what a retorno repeats of the remessa its run read: the header's
// fields (company, agreement, branch and account, bank) by their stable
// names, the first title's company fields, and each title's identifiers
// (seu número, uso da empresa, the ERP's nosso número) by the line the
// title starts on (the row's source_row). A run from a sheet has none.
type Echo struct {
	Layout  string            `json:"layout,omitempty"` // the retorno layout the input came in (cnab240, cnab400-237, cnab400-341)
	Header  map[string]string `json:"header,omitempty"` // record "0" of the remessa
	Batch   map[string]string `json:"batch,omitempty"`  // CNAB 240: the first batch header (record "1")
	Company map[string]string `json:"company,omitempty"`
	Titles  map[int]TitleIDs  `json:"-"`
	Warning string            `json:"-"`
}

// TitleIDs are the identifiers of one title of the remessa.
type TitleIDs struct {
	SeuNumero   string
	UsoEmpresa  string
	NossoNumero string // the ERP's
}

// companyFields are the fields of a title that name the company, not the
// title: the retorno's details repeat them.
var companyFields = []string{"empresa_tipo", "empresa_documento", "empresa_beneficiaria", "agencia", "agencia_dv", "conta",
	"conta_dv", "agencia_conta_dv", "carteira", "carteira_codigo", "especie"}

// readEcho reads what the retorno repeats from the run's input file; a
// file that is gone or changed since the run gives an Echo with only a
// Warning (the retorno is still written, from the run's own records).
func readEcho(path, wantSHA string) (*Echo, error) {
	if path == "" {
		return nil, nil
	}
	e := &Echo{}
	f, err := os.Open(path)
	if err != nil {
		e.Warning = fmt.Sprintf("a entrada da execução (%s) não está mais lá: o retorno sai sem o que a remessa dizia (uso da empresa, nosso número do ERP, agência e conta)", path)
		return e, nil
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	format := cnab.Detect(head[:n])
	if format == "" {
		return nil, nil // a sheet
	}
	if wantSHA != "" {
		h := sha256.New()
		f.Seek(0, io.SeekStart)
		if _, err := io.Copy(h, f); err != nil {
			return nil, fmt.Errorf("retorno: ler %s: %w", path, err)
		}
		if hex.EncodeToString(h.Sum(nil)) != wantSHA {
			e.Warning = fmt.Sprintf("a entrada da execução (%s) mudou desde a execução: o retorno sai sem o que a remessa dizia", path)
			e.Layout = layoutOfHead(head[:n])
			return e, nil
		}
	}
	f.Seek(0, io.SeekStart)
	e.Layout = layoutOfHead(head[:n])
	rd, err := cnab.NewReader(f, cnab.Options{Format: format})
	if err != nil {
		e.Warning = fmt.Sprintf("a entrada da execução (%s) não se lê mais como remessa: %v", path, err)
		return e, nil
	}
	l := rd.Header.Layout
	// the header records, decoded as the reader does
	f2, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f2.Close()
	br := bufio.NewReader(f2)
	for _, rec := range []string{"0", "1"} {
		if rec == "1" && l.LineLen != 240 {
			break
		}
		raw, _ := br.ReadString('\n')
		text := decode(strings.TrimRight(raw, "\r\n"))
		m := map[string]string{}
		for _, fl := range l.Records[rec] {
			m[fl.Name] = slice(text, fl.Start, fl.End)
		}
		if rec == "0" {
			e.Header = m
		} else {
			e.Batch = m
		}
	}
	e.Titles = map[int]TitleIDs{}
	get := func(t *cnab.Title, name string) string {
		ln, fl := t.Lookup(name)
		if ln == nil {
			return ""
		}
		return strings.TrimSpace(ln.Get(fl))
	}
	for {
		t, err := rd.Next()
		if err == io.EOF {
			break
		}
		var ce *cnab.Error
		if errors.As(err, &ce) && ce.Title {
			continue
		}
		if err != nil {
			break // the run read the file up to its problem: so do we
		}
		if e.Company == nil {
			e.Company = map[string]string{}
			for _, name := range companyFields {
				if ln, fl := t.Lookup(name); ln != nil {
					e.Company[name] = ln.Get(fl)
				}
			}
		}
		e.Titles[t.First()] = TitleIDs{SeuNumero: get(t, "seu_numero"), UsoEmpresa: get(t, "uso_empresa"), NossoNumero: get(t, "nosso_numero")}
	}
	return e, nil
}

// layoutOfHead is the retorno layout matching a remessa's first line.
func layoutOfHead(head []byte) string {
	switch cnab.Detect(head) {
	case cnab.Format240:
		return Layout240
	case cnab.Format400:
		switch string(head[76:79]) {
		case "237":
			return Layout400Brad
		case "341":
			return Layout400Itau
		}
	}
	return ""
}

// decode reads a line as the CNAB reader does: UTF-8 when valid, else
// Windows-1252.
func decode(s string) []rune {
	if utf8.ValidString(s) {
		return []rune(s)
	}
	rs := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		rs[i] = charmap.Windows1252.DecodeByte(s[i])
	}
	return rs
}

// slice is positions start..end (1-based, inclusive) of a decoded line.
func slice(rs []rune, start, end int) string {
	if end > len(rs) {
		end = len(rs)
	}
	if start > end {
		return ""
	}
	return string(rs[start-1 : end])
}

// DefaultLayout is the retorno layout of the remessa the run in dir read
// ("" when its input was a sheet, or is gone): what `remessa retorno`
// writes without --layout.
func DefaultLayout(ctx context.Context, dir string) string {
	m, err := run.ReadMeta(ctx, dir)
	if err != nil {
		return ""
	}
	f, err := os.Open(m.InputFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return layoutOfHead(head[:n])
}
