// Package all links every sandbox module into a binary or test: import it
// for its side effects.
//
//	import _ "remessa/sandbox/all"
//
// Each module registers itself with remessa/sandbox/module from its init
// function; this file only lists the module packages that compile.
package all

import (
	_ "remessa/sandbox/charges"   // /v1 charges, carnets, links, card tokenization
	_ "remessa/sandbox/control"   // /sandbox control routes (pay, clock, outbox)
	_ "remessa/sandbox/documents" // slip and carnet documents
	_ "remessa/sandbox/outbox"    // notifications and webhooks (the Notifier)
	_ "remessa/sandbox/pix"       // /v2 Pix and its mTLS listener
)
