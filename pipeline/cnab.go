package pipeline

import (
	"fmt"
	"io"
	"os"
	"strings"

	"remessa/formats"
	"remessa/formats/cnab"
	"remessa/rules"
)

// checkCNABInput settles whether the job's input is a CNAB remessa: the
// format the job names, else the one its first line shows. A CNAB input
// takes no sheet and no column overrides (its fields are at fixed
// positions), and its bank and company, when given, are checked against
// the file header.
func (c *checker) checkCNABInput(j *Job, s *JobSpec) {
	in := s.Input
	j.InputFormat = in.Format
	if j.InputFormat == "" && j.InputFile != "" {
		if f, err := os.Open(j.InputFile); err == nil {
			head := make([]byte, 512)
			n, _ := io.ReadFull(f, head)
			f.Close()
			j.InputFormat = cnab.Detect(head[:n])
		}
	}
	if j.InputFormat == "" {
		for _, f := range []struct{ ptr, v string }{{"/input/bank", in.Bank}, {"/input/company", in.Company}} {
			if f.v != "" {
				c.fail(f.ptr, "so_cnab", fmt.Sprintf("%s só vale para remessas CNAB (input.format: cnab240 ou cnab400)", strings.TrimPrefix(f.ptr, "/input/")),
					fmt.Sprintf("%s only applies to CNAB remessas (input.format: cnab240 or cnab400)", strings.TrimPrefix(f.ptr, "/input/")))
			}
		}
		return
	}
	if in.Sheet != "" {
		c.fail("/input/sheet", "so_planilha", "uma remessa CNAB não tem abas", "a CNAB remessa has no sheets")
	}
	if in.Bank != "" && (len(in.Bank) != 3 || !rules.AllDigits(in.Bank)) {
		c.fail("/input/bank", "banco_invalido", fmt.Sprintf("banco %q: use o código de 3 dígitos (ex.: 237)", in.Bank), fmt.Sprintf("bank %q: use the 3-digit code (e.g. 237)", in.Bank))
	}
	doc := rules.CleanDocument(in.Company)
	if in.Company != "" && !(len(doc) == 14 && rules.ValidCNPJ(doc) || len(doc) == 11 && rules.ValidCPF(doc)) {
		c.fail("/input/company", "documento_invalido", fmt.Sprintf("company %q não é um CNPJ ou CPF válido", in.Company), fmt.Sprintf("company %q is not a valid CNPJ or CPF", in.Company))
	}
	j.CNAB = formats.CNABOptions{Format: j.InputFormat, Bank: in.Bank, CompanyDoc: doc}
}

// cnabDefaults points the issuance's fine and daily interest at the
// title's own (the Multa and Juros columns the CNAB reader fills) unless
// the job sets them.
func cnabDefaults(s *JobSpec) {
	ref := func(v *Value, col string) {
		if !v.Set {
			_ = v.decodeScalar("{{ ."+col+" }}", Pos{})
		}
	}
	switch {
	case s.Issue.Boletos != nil:
		ref(&s.Issue.Boletos.Fine, formats.CNABFine)
		ref(&s.Issue.Boletos.InterestPerDay, formats.CNABInterest)
	case s.Issue.Carnets != nil:
		ref(&s.Issue.Carnets.Fine, formats.CNABFine)
		ref(&s.Issue.Carnets.InterestPerDay, formats.CNABInterest)
	}
}

// withReuse is o with ReuseCells set.
func withReuse(o formats.Options) formats.Options { o.ReuseCells = true; return o }

// StreamOptions are the job's input options for a reader whose rows are
// used one at a time (ReuseCells).
func (j *Job) StreamOptions() formats.Options { return withReuse(j.InputOptions()) }
