package formats

import "strings"

// Arena makes many short strings out of large blocks, so that each costs
// no allocation of its own. It relies on strings.Builder never rewriting
// bytes it has handed out through String: a string taken from the arena
// stays valid after later writes, and keeps its whole block alive (copy a
// string that outlives most of its neighbours). The zero value is ready to
// use.
type Arena struct {
	b     strings.Builder
	start int
}

// ArenaBlock is the size of an arena's blocks.
const ArenaBlock = 64 << 10

// Begin starts a new string and makes room for n bytes of it (writing
// more is allowed, only less efficient).
func (a *Arena) Begin(n int) {
	if a.b.Cap()-a.b.Len() < n {
		a.b.Reset()
		a.b.Grow(max(n, ArenaBlock))
	}
	a.start = a.b.Len()
}

// Write appends p to the current string.
func (a *Arena) Write(p []byte) { a.b.Write(p) }

// WriteString appends s to the current string.
func (a *Arena) WriteString(s string) { a.b.WriteString(s) }

// Len is the length of the current string so far.
func (a *Arena) Len() int { return a.b.Len() - a.start }

// End returns the current string.
func (a *Arena) End() string { return a.b.String()[a.start:] }

// Bytes returns b as a string in the arena.
func (a *Arena) Bytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	a.Begin(len(b))
	a.b.Write(b)
	return a.End()
}
