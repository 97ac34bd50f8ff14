package formats

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The YAML reader is meant for small files written by hand or by another
// program: a list of mappings, or a mapping with a "rows" list. It is
// loaded whole (bounded by MaxBytes, default DefaultMaxYAMLBytes).

type yamlReader struct {
	src   Source
	items []*yaml.Node
	index map[string]int
	i     int
	opt   Options
}

func openYAML(path string, f *os.File, size int64, opt Options) (Reader, error) {
	max := opt.maxBytes(DefaultMaxYAMLBytes)
	if max > 0 && size > max {
		return nil, tooLarge(path, size, max)
	}
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	n := size
	if max > 0 && n > max {
		n = max
	}
	buf := bytes.NewBuffer(make([]byte, 0, n+bytes.MinRead)) // the file once, not doubling up to it
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, openErr(path, err)
	}
	data := buf.Bytes()
	src := Source{File: path, Format: "yaml", Encoding: "utf-8"}
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\uFEFF")))) == 0 {
		return nil, &Error{File: path, Code: CodeEmpty, Message: "arquivo vazio", MessageEN: "empty file"}
	}
	// A line past the line cap is refused before the parser, which holds
	// several copies of a value while it works (a 15 MB value cost 140 MB).
	if ml := opt.maxLine(); ml > 0 {
		for n, rest := 1, data; len(rest) > 0; n++ {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				i = len(rest)
			}
			if i > ml {
				return nil, &Error{File: path, Row: n, Code: CodeTooLarge,
					Message:   fmt.Sprintf("linha com mais de %s; o limite por linha é %s", sizeText(ml), sizeText(ml)),
					MessageEN: fmt.Sprintf("line longer than %s; the limit per line is %s", sizeText(ml), sizeText(ml))}
			}
			rest = rest[min(i+1, len(rest)):]
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 0
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			fmt.Sscanf(afterString(err.Error(), "line "), "%d", &line)
		}
		return nil, &Error{File: path, Row: line, Code: CodeCorrupt, Err: err,
			Message: "YAML inválido: " + err.Error(), MessageEN: "invalid YAML: " + err.Error()}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind == 0 || root.Kind == yaml.DocumentNode || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		return nil, &Error{File: path, Code: CodeEmpty, Message: "arquivo vazio", MessageEN: "empty file"}
	}
	if root.Kind == yaml.MappingNode {
		var rows *yaml.Node
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "rows" {
				rows = root.Content[i+1]
			}
		}
		if rows == nil {
			return nil, &Error{File: path, Row: root.Line, Code: CodeBadStructure,
				Message:   "esperava uma lista de linhas (\"- campo: valor\") ou a chave \"rows:\" com a lista",
				MessageEN: "expected a list of rows (\"- field: value\") or a \"rows:\" key holding the list"}
		}
		root = rows
	}
	if root.Kind != yaml.SequenceNode {
		return nil, &Error{File: path, Row: root.Line, Code: CodeBadStructure,
			Message:   "esperava uma lista de linhas (\"- campo: valor\")",
			MessageEN: "expected a list of rows (\"- field: value\")"}
	}
	y := &yamlReader{src: src, index: map[string]int{}, opt: opt}
	for _, it := range root.Content {
		if it.Kind != yaml.MappingNode {
			return nil, &Error{File: path, Row: it.Line, Code: CodeBadStructure,
				Message:   "cada item da lista deve ser um mapeamento \"campo: valor\"",
				MessageEN: "each list item must be a \"field: value\" mapping"}
		}
		for i := 0; i+1 < len(it.Content); i += 2 {
			k := strings.TrimSpace(it.Content[i].Value)
			if _, ok := y.index[k]; !ok {
				y.index[k] = len(y.src.Headers)
				y.src.Headers = append(y.src.Headers, k)
			}
		}
		y.items = append(y.items, it)
	}
	if len(y.items) == 0 {
		return nil, &Error{File: path, Code: CodeEmpty, Message: "a lista de linhas está vazia", MessageEN: "the list of rows is empty"}
	}
	y.src.Columns = y.src.Headers
	y.src.HeaderRow = root.Line
	return y, nil
}

func afterString(s, sep string) string {
	if i := strings.Index(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return ""
}

func (y *yamlReader) Source() Source { return y.src }
func (y *yamlReader) Close() error   { return nil }

func (y *yamlReader) Next() (Row, error) {
	if y.i >= len(y.items) {
		return Row{}, io.EOF
	}
	it := y.items[y.i]
	y.i++
	if max := y.opt.maxRows(); max > 0 && y.i > max {
		y.i = len(y.items)
		return Row{}, tooManyRows(y.src.File, "", it.Line, max)
	}
	cells := make([]Cell, len(y.src.Headers))
	for i, h := range y.src.Headers {
		cells[i] = Cell{Column: h, Header: h}
	}
	for i := 0; i+1 < len(it.Content); i += 2 {
		k := strings.TrimSpace(it.Content[i].Value)
		v := it.Content[i+1]
		col := y.index[k]
		c := &cells[col]
		if mc := y.opt.maxCell(); mc > 0 && (v.Kind == yaml.ScalarNode && len(v.Value) > mc || v.Kind == yaml.AliasNode && v.Alias != nil && len(v.Alias.Value) > mc) {
			y.i = len(y.items)
			return Row{}, &Error{File: y.src.File, Row: v.Line, Column: k, Header: k, Code: CodeTooLarge,
				Message:   fmt.Sprintf("valor com mais de %s; o limite por célula é %s", sizeText(mc), sizeText(mc)),
				MessageEN: fmt.Sprintf("value longer than %s; the limit per cell is %s", sizeText(mc), sizeText(mc))}
		}
		switch v.Kind {
		case yaml.ScalarNode:
			c.Raw = v.Value
			c.Value = strings.TrimFunc(v.Value, isSpaceLike)
			switch v.Tag {
			case "!!null":
				c.Kind, c.Value, c.Raw = KindEmpty, "", ""
			case "!!int", "!!float":
				c.Kind = KindNumber
			case "!!bool":
				c.Kind = KindBool
				c.Value = strings.ToLower(c.Value)
			case "!!timestamp":
				c.Kind = KindDate
				if len(c.Value) > 10 {
					c.Value = c.Value[:10]
				}
			default:
				c.Kind = KindText
				if c.Value == "" {
					c.Kind = KindEmpty
				}
			}
		case yaml.AliasNode:
			if v.Alias != nil && v.Alias.Kind == yaml.ScalarNode {
				c.Raw, c.Value, c.Kind = v.Alias.Value, strings.TrimSpace(v.Alias.Value), KindText
				continue
			}
			fallthrough
		default:
			return Row{Number: it.Line}, &Error{File: y.src.File, Row: v.Line, Column: k, Header: k, Code: CodeNestedValue,
				Message:   "o valor deve ser simples (texto ou número), não uma lista ou mapeamento",
				MessageEN: "the value must be a scalar (text or number), not a list or mapping"}
		}
	}
	return Row{Number: it.Line, Cells: cells}, nil
}
