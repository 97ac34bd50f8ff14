package formats

import (
	"encoding/xml"
	"io"
	"strconv"
)

// The worksheet parser written with encoding/xml: the reference that the
// sheet scanner (xlsxscan.go) is checked against in FuzzXLSXSheet. It
// reads rows into x.sc exactly as the scanner must.

// stdSheetRows is a testSheetRows reading with encoding/xml.
func stdSheetRows(x *xlsxReader, r io.Reader) func() (int, bool, error) {
	dec := xml.NewDecoder(r)
	return func() (int, bool, error) { return stdNextRow(x, dec) }
}

// stdNextRow is nextRow on encoding/xml.
func stdNextRow(x *xlsxReader, dec *xml.Decoder) (num int, ok bool, err error) {
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, x.xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "row" {
				continue
			}
			num = 0
			for _, a := range t.Attr {
				if a.Name.Local == "r" {
					num, _ = strconv.Atoi(a.Value)
				}
			}
			if num <= 0 {
				num = x.lastRow + 1
			}
			x.lastRow = num
			return num, true, stdReadCells(x, dec)
		case xml.EndElement:
			if t.Name.Local == "sheetData" {
				return 0, false, nil
			}
		}
	}
}

// stdReadCells reads the cells of the current <row> until </row>.
func stdReadCells(x *xlsxReader, dec *xml.Decoder) error {
	x.sc = x.sc[:0]
	col := -1
	var cur *scell
	where := "" // "v", "f", "t" (inline), "ph"
	inIS := false
	for {
		tok, err := dec.RawToken()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return x.xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "c":
				col++
				x.sc = append(x.sc, scell{col: col})
				cur = &x.sc[len(x.sc)-1]
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "r":
						if c := colIndex(a.Value); c >= 0 {
							col, cur.col = c, c
						}
					case "s":
						cur.s, _ = strconv.Atoi(a.Value)
					case "t":
						cur.t = a.Value
					}
				}
			case "v":
				where = "v"
			case "f":
				if cur != nil {
					cur.formula = true
				}
				where = "f"
			case "is":
				inIS = true
			case "t":
				if inIS {
					where = "t"
				}
			case "rPh":
				where = "ph"
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "row":
				return nil
			case "c":
				cur = nil
			case "is":
				inIS = false
			case "v", "f", "t", "rPh":
				where = ""
			}
		case xml.CharData:
			if cur == nil {
				continue
			}
			switch where {
			case "v":
				cur.v += string(t)
				cur.hasV = true
			case "t":
				cur.inline += string(t)
			}
		}
	}
}
