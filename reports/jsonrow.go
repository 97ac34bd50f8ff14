package reports

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"remessa/pipeline/results"
)

// appendRow appends row as jsonSink's encoder writes it (indented with
// two spaces after the prefix "    ", fields in struct order, omitempty
// as tagged, no HTML escaping, no trailing newline) without reflection:
// results.json is most of what a run writes, and encoding/json's
// reflection and its second pass to indent cost a few µs a row (issue
// 13). ok is false when a string needs more than escaping '"' and '\\'
// (a control character, invalid UTF-8, U+2028 or U+2029): the caller
// encodes the row with encoding/json then. TestAppendRowMatchesEncoder
// fills every field of results.Row by reflection, so a field added to it
// and not here fails the test.
func appendRow(b []byte, r *results.Row) ([]byte, bool) {
	return writeRow(rowWriter{b: b, ok: true}, r)
}

// MarshalRow returns json.Marshal's bytes of r (compact, HTML escaped),
// written as appendRow writes (without reflection) when no string needs
// an escape other than '"' and '\\' (nor '<', '>', '&'), by json.Marshal
// otherwise. The run journals a row's description and result so.
func MarshalRow(r *results.Row) []byte {
	return AppendMarshalRow(make([]byte, 0, 512), r)
}

// AppendMarshalRow appends MarshalRow's bytes of r to dst.
func AppendMarshalRow(dst []byte, r *results.Row) []byte {
	if b, ok := writeRow(rowWriter{b: dst, ok: true, compact: true}, r); ok {
		return b
	}
	b, _ := json.Marshal(r)
	return append(dst, b...)
}

func writeRow(w rowWriter, r *results.Row) ([]byte, bool) {
	w.open('{', 6)
	w.int("index", int64(r.Index))
	w.int("source_row", int64(r.SourceRow))
	w.str("key", r.Key)
	w.str("payer_name", r.PayerName)
	w.str("payer_document", r.PayerDoc)
	w.str("outcome", string(r.Outcome))
	w.int("amount_cents", r.AmountCents)
	w.strOmit("due_date", r.DueDate)
	w.strOmit("custom_id", r.CustomID)
	w.intOmit("carnet_id", r.CarnetID)
	if len(r.ChargeIDs) > 0 {
		w.key("charge_ids")
		w.open('[', 8)
		for _, id := range r.ChargeIDs {
			w.elem(8)
			w.b = strconv.AppendInt(w.b, id, 10)
		}
		w.close(']', 6)
	}
	w.strOmit("txid", r.Txid)
	w.strOmit("batch_id", r.BatchID)
	w.strOmit("link", r.Link)
	w.strOmit("pdf", r.PDF)
	w.strOmit("cover", r.Cover)
	w.strOmit("typed_line", r.TypedLine)
	w.strOmit("barcode", r.Barcode)
	w.strOmit("pix_copia_e_cola", r.PixCopiaECola)
	w.strOmit("location", r.Location)
	if len(r.Parcels) > 0 {
		w.key("parcels")
		w.open('[', 8)
		for i := range r.Parcels {
			p := &r.Parcels[i]
			w.elem(8)
			w.open('{', 10)
			w.int("number", int64(p.Number))
			w.int("charge_id", p.ChargeID)
			w.str("due_date", p.DueDate)
			w.int("value_cents", p.ValueCents)
			w.strOmit("status", p.Status)
			w.strOmit("typed_line", p.TypedLine)
			w.strOmit("barcode", p.Barcode)
			w.strOmit("pix_copia_e_cola", p.PixCopiaECola)
			w.strOmit("link", p.Link)
			w.strOmit("pdf", p.PDF)
			w.shares(p.Split, 10)
			w.close('}', 8)
		}
		w.close(']', 6)
	}
	w.shares(r.Split, 6)
	if len(r.Problems) > 0 {
		w.key("problems")
		w.open('[', 8)
		for i := range r.Problems {
			p := &r.Problems[i]
			w.elem(8)
			w.open('{', 10)
			w.str("code", p.Code)
			w.strOmit("field", p.Field)
			w.strOmit("column", p.Column)
			w.strOmit("header", p.Header)
			w.strOmit("value", p.Value)
			w.str("message", p.Message)
			w.strOmit("message_en", p.MessageEN)
			w.strOmit("action", p.Action)
			w.strOmit("action_en", p.ActionEN)
			w.close('}', 8)
		}
		w.close(']', 6)
	}
	w.close('}', 4)
	return w.b, w.ok
}

// rowWriter writes an indented JSON value: each member or element on its
// line, indented by depth spaces; n counts the members of the innermost
// open object or list (a separator before all but the first, an empty one
// closed on the same line), its outer ones' counts kept in outer.
type rowWriter struct {
	b       []byte
	ok      bool
	compact bool // json.Marshal's layout: no newlines or spaces, '<', '>', '&' escaped (not ok)
	depth   int
	n       int
	outer   []int
}

func (w *rowWriter) open(c byte, depth int) {
	w.b = append(w.b, c)
	w.outer = append(w.outer, w.n)
	w.n, w.depth = 0, depth
}

func (w *rowWriter) close(c byte, depth int) {
	if w.n > 0 {
		w.newline(depth)
	}
	w.b = append(w.b, c)
	w.n, w.outer = w.outer[len(w.outer)-1], w.outer[:len(w.outer)-1]
	w.depth = depth
}

func (w *rowWriter) newline(depth int) {
	if w.compact {
		return
	}
	w.b = append(w.b, '\n')
	for range depth {
		w.b = append(w.b, ' ')
	}
}

// elem starts an element of a list at depth.
func (w *rowWriter) elem(depth int) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.newline(depth)
}

// key starts a member of the object open at w.depth.
func (w *rowWriter) key(k string) {
	w.elem(w.depth)
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
	if !w.compact {
		w.b = append(w.b, ' ')
	}
}

func (w *rowWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *rowWriter) intOmit(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *rowWriter) str(k, v string) {
	w.key(k)
	w.string(v)
}

func (w *rowWriter) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *rowWriter) shares(s []results.Share, depth int) {
	if len(s) == 0 {
		return
	}
	w.key("split")
	w.open('[', depth+2)
	for i := range s {
		sh := &s[i]
		w.elem(depth + 2)
		w.open('{', depth+4)
		w.str("recipient", sh.Recipient)
		if sh.Own {
			w.key("own")
			w.b = append(w.b, "true"...)
		}
		w.strOmit("due_month", sh.DueMonth)
		w.int("amount_cents", sh.AmountCents)
		w.close('}', depth+2)
	}
	w.close(']', depth)
}

// string appends v quoted, escaping '"' and '\\' as encoding/json does;
// anything else it would escape or replace sets w.ok false.
func (w *rowWriter) string(v string) {
	w.b = append(w.b, '"')
	start, wide := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if plainByte[c] {
			continue
		}
		switch {
		case c < 0x20:
			w.ok = false
		case c >= utf8.RuneSelf:
			wide = true
		case c == '"' || c == '\\':
			w.b = append(w.b, v[start:i]...)
			w.b = append(w.b, '\\', c)
			start = i + 1
		case w.compact: // '<', '>', '&'
			w.ok = false
		}
	}
	w.b = append(w.b, v[start:]...)
	w.b = append(w.b, '"')
	if wide && (!utf8.ValidString(v) || strings.Contains(v, "\u2028") || strings.Contains(v, "\u2029")) {
		w.ok = false
	}
}

// plainByte says which bytes a string holds as they are in any layout:
// printable ASCII but '"', '\\', '<', '>', '&'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()
