package formats

import (
	"fmt"
	"strconv"
	"strings"
)

// PositionColumn is the Column of a cell read from a fixed-width file
// (CNAB): "line:start-end", so that a message can say "linha 8, posições
// 34–73" where a spreadsheet's says "linha 8, coluna C".
func PositionColumn(line, start, end int) string {
	return strconv.Itoa(line) + ":" + strconv.Itoa(start) + "-" + strconv.Itoa(end)
}

// ParsePositionColumn undoes PositionColumn; ok is false for a
// spreadsheet column.
func ParsePositionColumn(col string) (line, start, end int, ok bool) {
	l, rest, ok1 := strings.Cut(col, ":")
	s, e, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	line, err1 = strconv.Atoi(l)
	start, err2 = strconv.Atoi(s)
	end, err3 = strconv.Atoi(e)
	return line, start, end, err1 == nil && err2 == nil && err3 == nil && line > 0 && start > 0 && end >= start
}

// Place renders where a value is, without the file: "linha 3, coluna C
// (CPF)" for a spreadsheet, "linha 8, posições 34–73 (Nome do pagador)"
// for a fixed-width file (the column's line wins over row: a title's row
// is its first line, its fields may be on the next ones). Parts that are
// unknown are left out; "" when nothing is known.
func Place(lang string, row int, col, header string) string {
	rowW, colW, posW, oneW := "linha", "coluna", "posições", "posição"
	if lang == "en" {
		rowW, colW, posW, oneW = "row", "column", "positions", "position"
	}
	var parts []string
	if line, start, end, ok := ParsePositionColumn(col); ok {
		if lang == "en" {
			rowW = "line"
		}
		s := fmt.Sprintf("%s %d, %s %d–%d", rowW, line, posW, start, end)
		if start == end {
			s = fmt.Sprintf("%s %d, %s %d", rowW, line, oneW, start)
		}
		if header != "" {
			s += " (" + header + ")"
		}
		return s
	}
	if row > 0 {
		parts = append(parts, fmt.Sprintf("%s %d", rowW, row))
	}
	if col != "" || header != "" {
		s := colW
		if col != "" {
			s += " " + col
		}
		if header != "" && header != col {
			s += " (" + header + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
