// Package module is the seam between the sandbox core and the route
// modules (charges, pix, documents, outbox, control). A module package
// registers a constructor from its init function:
//
//	func init() { module.Register("charges", func(d module.Deps) (module.Module, error) { return New(d) }) }
//
// and the sandbox server builds every registered module with the shared
// Deps when it starts. Binaries and tests that want all modules import
// remessa/sandbox/all for its side effects; a module's own tests get the
// core plus that module only. Modules never import the root sandbox
// package, so there is no import cycle and no file two helpers must edit.
package module

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"remessa/sandbox/auth"
	"remessa/sandbox/clock"
	"remessa/sandbox/httpx"
	"remessa/sandbox/store"
)

// Notifier queues an outgoing HTTP delivery (status-change notification,
// Pix webhook) in the same transaction as the state change that causes it.
type Notifier interface {
	Enqueue(ctx context.Context, tx *store.Tx, url string, body []byte, contentType string) error
}

// Retargeter is optionally implemented by the Notifier, for deliveries
// that follow their owner's current URL (a charge's notification_url).
// EnqueueFor is Enqueue with key naming the owner (its notification
// token). Retarget, called in the transaction that changes the owner's
// URL, sends the key's pending deliveries (not delivered, not given up) to
// url instead, keeping their retry schedule; url "" gives them up. It
// returns how many deliveries it changed.
type Retargeter interface {
	EnqueueFor(ctx context.Context, tx *store.Tx, key, url string, body []byte, contentType string) error
	Retarget(ctx context.Context, tx *store.Tx, key, url string) (int, error)
}

// Deps is what every module gets from the core.
type Deps struct {
	Store *store.Store
	Clock clock.Clock
	Auth  *auth.Service
	// BaseURL is the scheme://host of the request as the client reached
	// the sandbox (use it for links in answers).
	BaseURL func(r *http.Request) string
	// URL and PixURL return the listening base URLs ("http://127.0.0.1:8080")
	// once the server started, "" before (or when only Handler() is used).
	URL    func() string
	PixURL func() string
	Logger zerolog.Logger
	// Notify is nil until an outbox module registers a notifier.
	Notify Notifier
	// Lookup returns another built module (or the notifier, if it is a
	// Module) by its registered name. Call it at request time, not in a
	// constructor: modules are built in name order.
	Lookup func(name string) (Module, bool)

	DataDir    string        // directory of the database ("" for :memory:)
	BatchDelay time.Duration // how long PUT /v2/lotecobv items stay EM_PROCESSAMENTO
	TLS        bool          // the Pix listener serves TLS (mTLS)
	// NotifySpeedup divides the notifier's retry waits (0 or 1 = real).
	NotifySpeedup int
}

// Mux is where a module registers its routes: an *http.ServeMux in a
// module's own tests, the sandbox's router (which remembers every pattern,
// see sandbox.Server.Routes) in the server.
type Mux = httpx.Mux

// Module is a group of routes.
type Module interface {
	Register(mux Mux)
}

// Runner is optionally implemented by a Module or Notifier that needs a
// background goroutine (e.g. the outbox delivery loop). Run is started
// after the server listens and must return when ctx is cancelled.
type Runner interface {
	Run(ctx context.Context)
}

// Closer is optionally implemented to release resources at shutdown,
// after Run returned and before the store is closed.
type Closer interface {
	Close() error
}

// Constructor builds a module.
type Constructor func(d Deps) (Module, error)

// NotifierConstructor builds the notifier. If the returned value also
// implements Module, Runner or Closer it is registered, run and closed
// like a module.
type NotifierConstructor func(d Deps) (Notifier, error)

// TLSSetup is what a TLS provider returns for the Pix listener.
type TLSSetup struct {
	Config *tls.Config // server config (certificate, client CA, ClientAuth)
	CAFile string      // PEM of the CA clients must trust (for api.Config.CAFile)
	// ClientCertFile and ClientKeyFile are a client certificate the
	// sandbox issued for its first application, if any.
	ClientCertFile, ClientKeyFile string
	// ClientP12File is the same client certificate and key as PKCS#12
	// (.p12, empty password), the form Efí issues (api.Config.P12File).
	ClientP12File string
}

// TLSProvider builds the Pix listener's TLS configuration.
type TLSProvider func(d Deps) (*TLSSetup, error)

// Entry is one registered module.
type Entry struct {
	Name string
	New  Constructor
}

var (
	mu        sync.Mutex
	modules   = map[string]Constructor{}
	notifier  NotifierConstructor
	notifName string
	tlsProv   TLSProvider
)

// Register adds a module constructor under a unique name; call it from init.
func Register(name string, ctor Constructor) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := modules[name]; dup {
		panic(fmt.Sprintf("module: %q registered twice", name))
	}
	modules[name] = ctor
}

// RegisterNotifier sets the notifier constructor (only one may exist).
func RegisterNotifier(name string, ctor NotifierConstructor) {
	mu.Lock()
	defer mu.Unlock()
	if notifier != nil {
		panic(fmt.Sprintf("module: notifier %q registered, %q already was", name, notifName))
	}
	notifier, notifName = ctor, name
}

// RegisterTLS sets the Pix listener's TLS provider (only one may exist).
func RegisterTLS(p TLSProvider) {
	mu.Lock()
	defer mu.Unlock()
	if tlsProv != nil {
		panic("module: TLS provider registered twice")
	}
	tlsProv = p
}

// Modules returns the registered modules sorted by name.
func Modules() []Entry {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Entry, 0, len(modules))
	for n, c := range modules {
		out = append(out, Entry{n, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NotifierCtor returns the registered notifier constructor and its name,
// or nil.
func NotifierCtor() (string, NotifierConstructor) {
	mu.Lock()
	defer mu.Unlock()
	return notifName, notifier
}

// TLS returns the registered TLS provider or nil.
func TLS() TLSProvider {
	mu.Lock()
	defer mu.Unlock()
	return tlsProv
}
