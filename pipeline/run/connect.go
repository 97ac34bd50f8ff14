package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"remessa/pipeline"
	"remessa/pipeline/journal"
)

// ReadMeta reads the identity and settings of the run in dir from its
// journal (the run need not be finished; nothing is changed).
func ReadMeta(ctx context.Context, dir string) (Meta, error) {
	j, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return Meta{}, &UsageError{Msg: fmt.Sprintf("%s não é a pasta de uma execução (sem %s)", dir, journal.FileName), Err: err}
	}
	defer j.Close()
	metas, err := j.Meta(ctx)
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := json.Unmarshal([]byte(metas["meta"]), &m); err != nil || m.RunID == "" {
		return Meta{}, fmt.Errorf("journal de %s: metadados ilegíveis", dir)
	}
	m.relocate(dir)
	return m, nil
}

// relocate points the run's embedded sandbox folder, when it is the
// default one of its runs folder (<runs>/.sandbox, recorded as an
// absolute path when the run began), at the runs folder the run is in
// now: a runs folder moved, or restored from a backup elsewhere, goes on
// with its own sandbox and never with the one at the old place.
func (m *Meta) relocate(dir string) {
	if m.SandboxDir == "" || filepath.Base(m.SandboxDir) != ".sandbox" {
		return
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	if here := sandboxDirFor(filepath.Dir(abs)); here != m.SandboxDir {
		if st, err := os.Stat(here); err == nil && st.IsDir() {
			m.SandboxDir = here
		}
	}
}

// Connect opens the service the run in dir issued on, the way Resume
// does: the embedded sandbox (opts.Embedded when given, else started on
// the run's sandbox folder), or the run's service with the job's or the
// environment's credentials; opts.BaseURL and opts.PixBaseURL point it
// elsewhere (a `remessa sandbox` serving the run's data). The caller
// closes the Service.
func Connect(ctx context.Context, dir string, opts Options) (*Service, Meta, error) {
	m, err := ReadMeta(ctx, dir)
	if err != nil {
		return nil, Meta{}, err
	}
	svc, err := connect(ctx, serviceConfigFor(m, opts, zerolog.Nop()))
	return svc, m, err
}

// serviceConfigFor is how a run's service is reached: its meta, with the
// options' overrides and the credentials of the job or the environment.
func serviceConfigFor(m Meta, opts Options, log zerolog.Logger) serviceConfig {
	c := serviceConfig{Kind: m.Service, BaseURL: m.BaseURL, PixBaseURL: m.PixBaseURL, SandboxDir: m.SandboxDir,
		PixKeys: m.PixKeys, SplitContas: m.SplitContas, Rates: m.Rates, Log: log, Timeout: opts.Timeout, Embedded: opts.Embedded}
	if opts.BaseURL != "" {
		c.BaseURL, c.PixBaseURL = opts.BaseURL, opts.PixBaseURL
		if c.Kind == "embedded" {
			// a `remessa sandbox` serving the embedded data answers with
			// the embedded credentials
			c.Kind = "sandbox"
			c.ClientID, c.ClientSecret = EmbeddedClientID, EmbeddedClientSecret
		}
	}
	if opts.Rates != nil {
		c.Rates = opts.Rates
	}
	if c.Kind != "embedded" && c.ClientID == "" {
		// the job's endpoint (${VAR} only) first, then the environment
		if job, err := pipeline.Load(m.JobFile, pipeline.LoadOptions{Getenv: opts.Getenv}); err == nil {
			c.ClientID, c.ClientSecret = job.Endpoint.ClientID, job.Endpoint.ClientSecret
			c.P12File, c.P12Password = job.Endpoint.Certificate, job.Endpoint.CertificatePassword
		}
		if c.ClientID == "" || c.ClientSecret == "" {
			c.ClientID, c.ClientSecret = opts.getenv("REMESSA_CLIENT_ID"), opts.getenv("REMESSA_CLIENT_SECRET")
		}
		if c.P12File == "" {
			c.P12File, c.P12Password = opts.getenv("REMESSA_CERT"), opts.getenv("REMESSA_CERT_PASSWORD")
		}
	}
	return c
}
