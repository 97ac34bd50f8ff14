package results

import (
	"encoding/json"
	"errors"

	"remessa/internal/jsonscan"
)

// DecodeRow decodes a row as json.Marshal writes it (a journaled row's
// description or result, an element of results.json's rows) into *r,
// which must be zero, as json.Unmarshal does. The fields' own names are
// read in one pass with a jsonscan.Scanner (which checks the text and
// decodes strings as encoding/json does), about three times faster than
// json.Unmarshal (which checks the whole text before decoding it); this
// file holds only the mapping of names to fields. Anything else (another
// name or one that differs in case, null, a number that is not an
// integer, a list given twice, text the Scanner refuses) is left to
// json.Unmarshal, from a zero row again (pipeline/run's TestUnmarshalRow
// and FuzzUnmarshalRow).
func DecodeRow(b []byte, r *Row) error {
	s := jsonscan.NewShared(b) // a row keeps most of its text
	if ScanRow(&s, r) == nil && s.End() == nil {
		return nil
	}
	*r = Row{}
	return json.Unmarshal(b, r)
}

// ErrSlow is what ScanRow leaves to json.Unmarshal.
var ErrSlow = errors.New("results: linha a decodificar por encoding/json")

func intTo(s *jsonscan.Scanner, p *int) error {
	v, err := s.Int()
	if err == nil && int64(int(v)) != v {
		return ErrSlow
	}
	*p = int(v)
	return err
}

func int64To(s *jsonscan.Scanner, p *int64) error {
	v, err := s.Int()
	*p = v
	return err
}

func strTo(s *jsonscan.Scanner, p *string) error {
	v, err := s.Str()
	*p = v
	return err
}

// list reads a list into *l, which must be nil (json.Unmarshal decodes a
// list given again into the elements it has), with elem reading each
// element into its place.
func list[T any](s *jsonscan.Scanner, l *[]T, elem func(*T) error) error {
	if *l != nil {
		return ErrSlow
	}
	*l = []T{}
	return s.Array(func() error {
		*l = append(*l, *new(T))
		return elem(&(*l)[len(*l)-1])
	})
}

// ScanRow reads one row (an object) at s into *r, which must be zero: the
// names json.Marshal writes of a Row, and ErrSlow for anything else, which
// the caller decodes with json.Unmarshal instead.
func ScanRow(s *jsonscan.Scanner, r *Row) error {
	return s.Object(func(name []byte) error {
		switch string(name) {
		case "index":
			return intTo(s, &r.Index)
		case "source_row":
			return intTo(s, &r.SourceRow)
		case "key":
			return strTo(s, &r.Key)
		case "payer_name":
			return strTo(s, &r.PayerName)
		case "payer_document":
			return strTo(s, &r.PayerDoc)
		case "outcome":
			v, err := s.Str()
			r.Outcome = Outcome(v)
			return err
		case "amount_cents":
			return int64To(s, &r.AmountCents)
		case "due_date":
			return strTo(s, &r.DueDate)
		case "custom_id":
			return strTo(s, &r.CustomID)
		case "carnet_id":
			return int64To(s, &r.CarnetID)
		case "charge_ids":
			return list(s, &r.ChargeIDs, func(p *int64) error { return int64To(s, p) })
		case "txid":
			return strTo(s, &r.Txid)
		case "batch_id":
			return strTo(s, &r.BatchID)
		case "link":
			return strTo(s, &r.Link)
		case "pdf":
			return strTo(s, &r.PDF)
		case "cover":
			return strTo(s, &r.Cover)
		case "typed_line":
			return strTo(s, &r.TypedLine)
		case "barcode":
			return strTo(s, &r.Barcode)
		case "pix_copia_e_cola":
			return strTo(s, &r.PixCopiaECola)
		case "location":
			return strTo(s, &r.Location)
		case "parcels":
			return list(s, &r.Parcels, func(p *Parcel) error { return readParcel(s, p) })
		case "split":
			return list(s, &r.Split, func(sh *Share) error { return readShare(s, sh) })
		case "problems":
			return list(s, &r.Problems, func(p *Problem) error { return readProblem(s, p) })
		}
		return ErrSlow
	})
}

func readParcel(s *jsonscan.Scanner, p *Parcel) error {
	return s.Object(func(name []byte) error {
		switch string(name) {
		case "number":
			return intTo(s, &p.Number)
		case "charge_id":
			return int64To(s, &p.ChargeID)
		case "due_date":
			return strTo(s, &p.DueDate)
		case "value_cents":
			return int64To(s, &p.ValueCents)
		case "status":
			return strTo(s, &p.Status)
		case "typed_line":
			return strTo(s, &p.TypedLine)
		case "barcode":
			return strTo(s, &p.Barcode)
		case "pix_copia_e_cola":
			return strTo(s, &p.PixCopiaECola)
		case "link":
			return strTo(s, &p.Link)
		case "pdf":
			return strTo(s, &p.PDF)
		case "split":
			return list(s, &p.Split, func(sh *Share) error { return readShare(s, sh) })
		}
		return ErrSlow
	})
}

func readShare(s *jsonscan.Scanner, sh *Share) error {
	return s.Object(func(name []byte) error {
		switch string(name) {
		case "recipient":
			return strTo(s, &sh.Recipient)
		case "own":
			v, err := s.Bool()
			sh.Own = v
			return err
		case "due_month":
			return strTo(s, &sh.DueMonth)
		case "amount_cents":
			return int64To(s, &sh.AmountCents)
		}
		return ErrSlow
	})
}

func readProblem(s *jsonscan.Scanner, p *Problem) error {
	return s.Object(func(name []byte) error {
		switch string(name) {
		case "code":
			return strTo(s, &p.Code)
		case "field":
			return strTo(s, &p.Field)
		case "column":
			return strTo(s, &p.Column)
		case "header":
			return strTo(s, &p.Header)
		case "value":
			return strTo(s, &p.Value)
		case "message":
			return strTo(s, &p.Message)
		case "message_en":
			return strTo(s, &p.MessageEN)
		case "action":
			return strTo(s, &p.Action)
		case "action_en":
			return strTo(s, &p.ActionEN)
		}
		return ErrSlow
	})
}

// Decode decodes results.json's text b into *r, which must be zero, as
// json.Unmarshal does. The rows, nearly all of the text, are read in one
// pass by ScanRow (json.Unmarshal took a fifth of a 100,000-row retorno's
// CPU); the run's header and the totals, small, by json.Unmarshal; and
// anything ScanRow leaves, or a member that is not one of the four, sends
// the whole text to json.Unmarshal from a zero Results again
// (TestDecode).
func Decode(b []byte, r *Results) error {
	s := jsonscan.NewShared(b)
	if scanResults(&s, r) == nil && s.End() == nil {
		return nil
	}
	*r = Results{}
	return json.Unmarshal(b, r)
}

func scanResults(s *jsonscan.Scanner, r *Results) error {
	seen := 0
	return s.Object(func(name []byte) error {
		bit := 0
		switch string(name) {
		case "version":
			bit = 1
		case "run":
			bit = 2
		case "rows":
			bit = 4
		case "totals":
			bit = 8
		default:
			return ErrSlow
		}
		if seen&bit != 0 {
			return ErrSlow // json.Unmarshal merges a member given twice
		}
		seen |= bit
		switch bit {
		case 1:
			return intTo(s, &r.Version)
		case 4:
			if s.Peek() != '[' {
				return ErrSlow
			}
			r.Rows = make([]Row, 0, 1024)
			return s.Array(func() error {
				r.Rows = append(r.Rows, Row{})
				return ScanRow(s, &r.Rows[len(r.Rows)-1])
			})
		}
		raw, err := s.Value()
		if err != nil {
			return err
		}
		if bit == 2 {
			return json.Unmarshal(raw, &r.Run)
		}
		return json.Unmarshal(raw, &r.Totals)
	})
}
