package documents

import "fmt"

// itfPatterns are the Interleaved 2 of 5 digit patterns of standards.md
// §1.5 (n = narrow, w = wide), indexed by digit.
var itfPatterns = [10]string{
	"nnwwn", "wnnnw", "nwnnw", "wwnnn", "nnwnw",
	"wnwnn", "nwwnn", "nnnww", "wnnwn", "nwnwn",
}

// ITFWide is the width of a wide element in narrow modules.
const ITFWide = 3

// ITFWidths returns the element widths, in narrow modules, of digits
// encoded as Interleaved 2 of 5: bar, space, bar, space, ... starting and
// ending with a bar. The start pattern is narrow bar, narrow space, narrow
// bar, narrow space; the stop pattern is wide bar, narrow space, narrow bar;
// in each pair of digits the first is carried by the bars and the second by
// the spaces between them. digits must be an even number of ASCII digits.
// For a 44-digit boleto barcode there are 227 elements, 405 modules wide.
func ITFWidths(digits string) ([]int, error) { return itfWidths(digits, ITFWide) }

// itfWidths is ITFWidths with a wide element wide narrow modules wide
// (standards.md §1.5 allows about 2.25 to 3; at 2 a boleto is 316 modules).
func itfWidths(digits string, wide int) ([]int, error) {
	if len(digits) == 0 || len(digits)%2 != 0 {
		return nil, fmt.Errorf("documents: interleaved 2 of 5 needs an even number of digits, got %d", len(digits))
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, fmt.Errorf("documents: interleaved 2 of 5: character %q at position %d is not a digit", digits[i], i+1)
		}
	}
	w := func(c byte) int {
		if c == 'w' {
			return wide
		}
		return 1
	}
	out := make([]int, 0, 4+5*len(digits)+3)
	out = append(out, 1, 1, 1, 1)
	for i := 0; i < len(digits); i += 2 {
		bars, spaces := itfPatterns[digits[i]-'0'], itfPatterns[digits[i+1]-'0']
		for k := 0; k < 5; k++ {
			out = append(out, w(bars[k]), w(spaces[k]))
		}
	}
	out = append(out, wide, 1, 1)
	return out, nil
}

// ITFBar is one bar of a drawn barcode: its left edge and width in modules.
type ITFBar struct{ X, W int }

// ITFBars returns the bars (not the spaces) of digits encoded as
// Interleaved 2 of 5, positioned in narrow modules from the left edge.
func ITFBars(digits string) ([]ITFBar, int, error) { return itfBars(digits, ITFWide) }

// itfBars is ITFBars with wide elements wide modules wide.
func itfBars(digits string, wide int) ([]ITFBar, int, error) {
	widths, err := itfWidths(digits, wide)
	if err != nil {
		return nil, 0, err
	}
	bars := make([]ITFBar, 0, len(widths)/2+1)
	x := 0
	for i, w := range widths {
		if i%2 == 0 {
			bars = append(bars, ITFBar{X: x, W: w})
		}
		x += w
	}
	return bars, x, nil
}
