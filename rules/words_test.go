package rules

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatMonth("pt", "2026-12"), "dez/2026"},
		{FormatMonth("en", "2026-12"), "Dec 2026"},
		{FormatMonth("pt", "2026-1"), "2026-1"},
		{FormatDate("pt", "2026-12-10"), "10/12/2026"},
		{FormatDate("en", "2026-12-10"), "2026-12-10"},
		{FormatDate("pt", "2026-02-30"), "2026-02-30"},
		{FormatTime("pt", "2026-11-28T01:31:27.42516332Z"), "27/11/2026 22:31"},
		{FormatTime("en", "2026-11-28T01:31:27Z"), "2026-11-27 22:31"},
		{FormatTime("pt", "ontem"), "ontem"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
