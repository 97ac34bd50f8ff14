// Package rules holds the pure domain rules of remessa: Brazilian tax ids,
// exact money parsing and formatting, civil dates, boleto barcodes and typed
// lines, Pix BR Codes, Pix identifiers and keys, field formats, the
// marketplace split of the charges API, the Pix split and the service limits.
//
// Nothing in this package does I/O. Every function is deterministic and safe
// for concurrent use.
package rules
