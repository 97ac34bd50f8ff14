//go:build tools

package main

// Dependencies chosen for the project, kept in go.mod before their first use.
import (
	_ "github.com/alitto/pond/v2"
	_ "github.com/boombuler/barcode"
	_ "github.com/go-pdf/fpdf"
	_ "github.com/gocarina/gocsv"
	_ "github.com/rs/zerolog"
	_ "github.com/xuri/excelize/v2"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/text/encoding/charmap"
	_ "golang.org/x/time/rate"
	_ "modernc.org/sqlite"
	_ "software.sslmate.com/src/go-pkcs12"
)
