// Package rules holds the pure domain rules of remessa: Brazilian tax ids,
// exact money parsing and formatting, civil dates, boleto barcodes and typed
// lines, Pix BR Codes, Pix identifiers and keys, field formats, the
// marketplace split of the charges API, the Pix split, the service limits,
// the national bank-holiday calendar, and the payment arithmetic of slips,
// carnet parcels and Pix cobv (fine, interest, discounts, abatimento, write-off
// and validity, partial payments).
//
// Nothing in this package does I/O. Every function is deterministic and safe
// for concurrent use.
package rules
