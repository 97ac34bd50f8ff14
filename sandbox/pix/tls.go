package pix

import (
	"remessa/sandbox/module"
	"remessa/sandbox/tlsca"
)

// The Pix module provides the mutual TLS of `remessa sandbox --tls`: the
// certificates live in DataDir/tls (tlsca.MemoryDir()/tls for an
// in-memory sandbox) and are created on the first start.
func init() {
	module.RegisterTLS(func(d module.Deps) (*module.TLSSetup, error) {
		dir := d.DataDir
		if dir == "" {
			dir = tlsca.MemoryDir()
		}
		p, cfg, err := tlsca.Ensure(dir)
		if err != nil {
			return nil, err
		}
		return &module.TLSSetup{Config: cfg, CAFile: p.CACert, ClientCertFile: p.ClientCert, ClientKeyFile: p.ClientKey, ClientP12File: p.ClientP12}, nil
	})
}
