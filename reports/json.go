package reports

import (
	"encoding/json"
	"io"

	"remessa/pipeline/results"
)

// WriteJSON writes r as results.json: indented with two spaces, fields in
// struct order and map keys sorted, so the same results give the same bytes.
func WriteJSON(w io.Writer, r *results.Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
