package run

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"remessa/pipeline/results"
)

// unmarshalRow decodes a journaled row's description or result (what
// json.Marshal wrote of a results.Row) into *r, which must be zero, as
// json.Unmarshal does. Text as json.Marshal writes it (compact, the
// fields' own names, strings without escapes) is read in one pass, about
// three times faster than json.Unmarshal (which checks the whole text
// before decoding it); anything else (an escape, a space, null, another
// name, a number that is not a plain integer, invalid UTF-8) is left to
// json.Unmarshal, from a zero row again (TestUnmarshalRow,
// FuzzUnmarshalRow).
func unmarshalRow(b []byte, r *results.Row) error {
	d := rowDecoder{b: b}
	if d.row(r) && d.i == len(b) {
		return nil
	}
	*r = results.Row{}
	return json.Unmarshal(b, r)
}

type rowDecoder struct {
	b []byte
	i int
}

func (d *rowDecoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads {"name":value,…} calling member for each name, which reads
// the value; false on anything else.
func (d *rowDecoder) object(member func(name string) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		name, ok := d.str()
		if !ok || !d.byte(':') || !member(name) {
			return false
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// list reads [value,…] calling elem for each; false on anything else.
func (d *rowDecoder) list(elem func() bool) bool {
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.byte(']') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// str reads a string without escapes or control characters, valid UTF-8.
func (d *rowDecoder) str() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	start, wide := d.i, false
	for ; d.i < len(d.b); d.i++ {
		if plainByte[d.b[d.i]] {
			continue
		}
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			if wide && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			wide = true
		}
	}
	return "", false
}

// plainByte says which bytes str takes as they are: printable ASCII but
// '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// int reads an integer as JSON writes it (no leading zeros, no fraction or
// exponent) that fits in 64 bits.
func (d *rowDecoder) int() (int64, bool) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if n := d.i - digits; n == 0 || n > 1 && d.b[digits] == '0' {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	return v, err == nil
}

func (d *rowDecoder) intTo(p *int) bool {
	v, ok := d.int()
	if ok && int64(int(v)) == v {
		*p = int(v)
		return true
	}
	return false
}

func (d *rowDecoder) int64To(p *int64) bool {
	v, ok := d.int()
	*p = v
	return ok
}

func (d *rowDecoder) strTo(p *string) bool {
	s, ok := d.str()
	*p = s
	return ok
}

func (d *rowDecoder) row(r *results.Row) bool {
	return d.object(func(name string) bool {
		switch name {
		case "index":
			return d.intTo(&r.Index)
		case "source_row":
			return d.intTo(&r.SourceRow)
		case "key":
			return d.strTo(&r.Key)
		case "payer_name":
			return d.strTo(&r.PayerName)
		case "payer_document":
			return d.strTo(&r.PayerDoc)
		case "outcome":
			s, ok := d.str()
			r.Outcome = results.Outcome(s)
			return ok
		case "amount_cents":
			return d.int64To(&r.AmountCents)
		case "due_date":
			return d.strTo(&r.DueDate)
		case "custom_id":
			return d.strTo(&r.CustomID)
		case "carnet_id":
			return d.int64To(&r.CarnetID)
		case "charge_ids":
			if r.ChargeIDs != nil { // json.Unmarshal decodes into the elements it has
				return false
			}
			r.ChargeIDs = []int64{}
			return d.list(func() bool {
				v, ok := d.int()
				r.ChargeIDs = append(r.ChargeIDs, v)
				return ok
			})
		case "txid":
			return d.strTo(&r.Txid)
		case "batch_id":
			return d.strTo(&r.BatchID)
		case "link":
			return d.strTo(&r.Link)
		case "pdf":
			return d.strTo(&r.PDF)
		case "cover":
			return d.strTo(&r.Cover)
		case "typed_line":
			return d.strTo(&r.TypedLine)
		case "barcode":
			return d.strTo(&r.Barcode)
		case "pix_copia_e_cola":
			return d.strTo(&r.PixCopiaECola)
		case "location":
			return d.strTo(&r.Location)
		case "parcels":
			if r.Parcels != nil {
				return false
			}
			r.Parcels = []results.Parcel{}
			return d.list(func() bool {
				r.Parcels = append(r.Parcels, results.Parcel{})
				return d.parcel(&r.Parcels[len(r.Parcels)-1])
			})
		case "split":
			return d.shares(&r.Split)
		case "problems":
			if r.Problems != nil {
				return false
			}
			r.Problems = []results.Problem{}
			return d.list(func() bool {
				r.Problems = append(r.Problems, results.Problem{})
				return d.problem(&r.Problems[len(r.Problems)-1])
			})
		}
		return false
	})
}

func (d *rowDecoder) parcel(p *results.Parcel) bool {
	return d.object(func(name string) bool {
		switch name {
		case "number":
			return d.intTo(&p.Number)
		case "charge_id":
			return d.int64To(&p.ChargeID)
		case "due_date":
			return d.strTo(&p.DueDate)
		case "value_cents":
			return d.int64To(&p.ValueCents)
		case "status":
			return d.strTo(&p.Status)
		case "typed_line":
			return d.strTo(&p.TypedLine)
		case "barcode":
			return d.strTo(&p.Barcode)
		case "pix_copia_e_cola":
			return d.strTo(&p.PixCopiaECola)
		case "link":
			return d.strTo(&p.Link)
		case "pdf":
			return d.strTo(&p.PDF)
		case "split":
			return d.shares(&p.Split)
		}
		return false
	})
}

func (d *rowDecoder) shares(s *[]results.Share) bool {
	if *s != nil {
		return false
	}
	*s = []results.Share{}
	return d.list(func() bool {
		*s = append(*s, results.Share{})
		sh := &(*s)[len(*s)-1]
		return d.object(func(name string) bool {
			switch name {
			case "recipient":
				return d.strTo(&sh.Recipient)
			case "own":
				switch {
				case d.i+4 <= len(d.b) && string(d.b[d.i:d.i+4]) == "true":
					sh.Own, d.i = true, d.i+4
					return true
				case d.i+5 <= len(d.b) && string(d.b[d.i:d.i+5]) == "false":
					sh.Own, d.i = false, d.i+5
					return true
				}
				return false
			case "due_month":
				return d.strTo(&sh.DueMonth)
			case "amount_cents":
				return d.int64To(&sh.AmountCents)
			}
			return false
		})
	})
}

func (d *rowDecoder) problem(p *results.Problem) bool {
	return d.object(func(name string) bool {
		switch name {
		case "code":
			return d.strTo(&p.Code)
		case "field":
			return d.strTo(&p.Field)
		case "column":
			return d.strTo(&p.Column)
		case "header":
			return d.strTo(&p.Header)
		case "value":
			return d.strTo(&p.Value)
		case "message":
			return d.strTo(&p.Message)
		case "message_en":
			return d.strTo(&p.MessageEN)
		case "action":
			return d.strTo(&p.Action)
		case "action_en":
			return d.strTo(&p.ActionEN)
		}
		return false
	})
}
