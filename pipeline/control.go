package pipeline

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"remessa/pipeline/results"
)

// CodeControlChar is the problem code of a cell holding a control
// character: the API and the banks refuse them, and they break printed
// slips.
const CodeControlChar = "caractere_controle"

// c0Names are the ASCII names of the C0 control characters.
var c0Names = [32]string{"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
	"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US"}

// controlChar finds the first character of s that no field accepts: a C0
// control character (U+0000 to U+001F) other than tab, DEL (U+007F) or a
// C1 control character (U+0080 to U+009F). With nl (the slip message,
// whose lines the API keeps) a line feed is allowed, and a carriage
// return right before one. pos is the 1-based character position.
func controlChar(s string, nl bool) (r rune, pos int, found bool) {
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 0x20 && b < 0x7f, b > 0xc2, b >= 0x80 && b < 0xc2:
			continue // printable ASCII, or a UTF-8 byte that cannot start a C1 character
		case b == '\t':
			continue
		case nl && b == '\n':
			continue
		case nl && b == '\r' && i+1 < len(s) && s[i+1] == '\n':
			continue
		case b == 0xc2:
			if i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
				return rune(s[i+1]), utf8.RuneCountInString(s[:i]) + 1, true
			}
			continue
		}
		return rune(b), utf8.RuneCountInString(s[:i]) + 1, true
	}
	return 0, 0, false
}

// controlName is "U+0000 (NUL)", or "U+0085" for a C1 character.
func controlName(r rune) string {
	switch {
	case r < 0x20:
		return fmt.Sprintf("U+%04X (%s)", r, c0Names[r])
	case r == 0x7f:
		return "U+007F (DEL)"
	}
	return fmt.Sprintf("U+%04X", r)
}

// controlMessages words the problem of a control character r at pos.
func controlMessages(r rune, pos int) (pt, en string) {
	if r == '\n' || r == '\r' {
		return fmt.Sprintf("quebra de linha %s na posição %d; este campo não aceita quebras de linha (só a mensagem do boleto aceita)", controlName(r), pos),
			fmt.Sprintf("line break %s at position %d; this field does not accept line breaks (only the slip message does)", controlName(r), pos)
	}
	return fmt.Sprintf("caractere de controle %s na posição %d; o banco recusa esse caractere: apague-o (costuma vir de texto copiado de outro sistema)", controlName(r), pos),
		fmt.Sprintf("control character %s at position %d; the bank refuses it: delete it (it usually comes from text copied from another system)", controlName(r), pos)
}

// visibleControls writes s with its control characters escaped ("\x00"),
// for the value a problem quotes: reports and terminals show it as text.
func visibleControls(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ctrlCol is a column whose cells are checked for control characters.
type ctrlCol struct {
	col   int
	field string
	nl    bool // line breaks allowed (the slip message)
}

// slipMessagePtr is the job pointer of the slip message, the only text
// that may hold line breaks.
const slipMessagePtr = "/issue/boletos/message"

// controlColumns lists the columns the job reads: those of its fields,
// and those its templates name alone ("{{ .Turma }}"). A column that
// serves the slip message and something else gets the stricter rule.
func (vr *rowValidator) controlColumns() {
	at := map[int]int{}
	add := func(col int, field string, nl bool) {
		if col < 0 {
			return
		}
		if k, ok := at[col]; ok {
			vr.ctrl[k].nl = vr.ctrl[k].nl && nl
			return
		}
		at[col] = len(vr.ctrl)
		vr.ctrl = append(vr.ctrl, ctrlCol{col: col, field: field, nl: nl})
	}
	for fi, f := range Catalogue {
		add(vr.cols[fi], f.ID, f.ID == FMessage && vr.kind == results.Boletos)
	}
	walkValues(vr.job.Spec, func(v *Value) {
		if v.info != nil && v.ref != "" {
			add(v.col, v.info.field, v.info.ptr == slipMessagePtr)
		}
	})
}

// checkControls refuses every cell of the row, among the columns the job
// reads, that holds a control character.
func (rc *rowCtx) checkControls() {
	for _, k := range rc.vr.ctrl {
		if k.col >= len(rc.row.Cells) {
			continue
		}
		c := &rc.row.Cells[k.col]
		r, pos, found := controlChar(c.Value, k.nl)
		if !found {
			continue
		}
		if c.Column == "" && k.col < len(rc.vr.src.Columns) {
			c.Column, c.Header = rc.vr.src.Columns[k.col], rc.vr.src.Headers[k.col]
		}
		pt, en := controlMessages(r, pos)
		rc.note(SevError, CodeControlChar, k.field, c, visibleControls(c.Value), pt, en)
	}
}

// checkTemplateControls checks the text a template made (from any
// columns) for control characters; false when it has one (noted).
func (rc *rowCtx) checkTemplateControls(v *Value, s string) bool {
	r, pos, found := controlChar(s, v.info.ptr == slipMessagePtr)
	if !found {
		return true
	}
	pt, en := controlMessages(r, pos)
	rc.note(SevError, CodeControlChar, v.info.field, nil, visibleControls(s),
		fmt.Sprintf("o modelo %q dá um texto com %s", v.Raw, pt), fmt.Sprintf("template %q gives a text with %s", v.Raw, en))
	return false
}
