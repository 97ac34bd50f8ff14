// Package all links every sandbox module into a binary or test: import it
// for its side effects.
//
//	import _ "remessa/sandbox/all"
//
// Each module registers itself with remessa/sandbox/module from its init
// function; this file only lists the module packages that compile.
package all
