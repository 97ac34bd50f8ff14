package run

import (
	"remessa/internal/jsonscan"
	"remessa/pipeline/results"
)

// unmarshalRow decodes a journaled row's description or result (what
// json.Marshal wrote of a results.Row) into *r, which must be zero, as
// json.Unmarshal does: results.DecodeRow, one pass with a
// jsonscan.Scanner and encoding/json for anything else (TestUnmarshalRow,
// FuzzUnmarshalRow).
func unmarshalRow(b []byte, r *results.Row) error { return results.DecodeRow(b, r) }

// readRow is results.ScanRow.
func readRow(s *jsonscan.Scanner, r *results.Row) error { return results.ScanRow(s, r) }

// errRowSlow is what the readers of this package leave to json.Unmarshal.
var errRowSlow = results.ErrSlow

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
