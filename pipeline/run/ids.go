package run

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"

	"remessa/pipeline"
)

// rowIDs are the identities ("key|first due date", rowIdentity) of a
// job's accepted rows as the runs index needs them, gathered as the rows
// stream: the SHA-256 of the ordered identities and a 64-bit hash of each
// with its position (16 bytes a row, not the identities themselves).
type rowIDs struct {
	sha    hash.Hash
	rows   []idOrd // in row order until byHash sorts them
	sorted bool
	names  map[int]string // the identities by position, when known (idsOf)
	// shaOnly: only the SHA-256 is kept (a second pass checking the first)
	shaOnly bool
	n       int
}

type idOrd struct {
	h   int64
	ord int
}

func newRowIDs() *rowIDs { return &rowIDs{sha: sha256.New()} }

// idsOf is the rowIDs of identities given in order; named, they also
// name the rows (the examples of a warning).
func idsOf(keys []string, named bool) *rowIDs {
	r := newRowIDs()
	if named {
		r.names = make(map[int]string, len(keys))
	}
	for i, k := range keys {
		if named {
			r.names[i] = k
		}
		r.add(k)
	}
	return r
}

// add counts the next row's identity.
func (r *rowIDs) add(identity string) {
	var n [binary.MaxVarintLen64]byte
	r.sha.Write(n[:binary.PutUvarint(n[:], uint64(len(identity)))])
	r.sha.Write([]byte(identity))
	if !r.shaOnly {
		r.rows = append(r.rows, idOrd{keyHash(identity), r.n})
	}
	r.n++
}

func (r *rowIDs) len() int { return r.n }

// sum is the SHA-256 of the identities added, each after its length (the
// runs index's keys_sha256).
func (r *rowIDs) sum() string { return hex.EncodeToString(r.sha.Sum(nil)) }

// byHash returns the rows sorted by hash (then position); add must not
// be called after.
func (r *rowIDs) byHash() []idOrd {
	if !r.sorted {
		slices.SortFunc(r.rows, func(a, b idOrd) int {
			if a.h != b.h {
				if a.h < b.h {
					return -1
				}
				return 1
			}
			return a.ord - b.ord
		})
		r.sorted = true
	}
	return r.rows
}

// ordOf returns the position of the first row with hash h.
func (r *rowIDs) ordOf(h int64) (int, bool) {
	rows := r.byHash()
	i, ok := slices.BinarySearchFunc(rows, h, func(x idOrd, h int64) int {
		switch {
		case x.h < h:
			return -1
		case x.h > h:
			return 1
		}
		return 0
	})
	if !ok {
		return 0, false
	}
	return rows[i].ord, true
}

// identitiesAt validates the job again and returns the identities of the
// accepted rows at the positions wanted (the few examples a warning
// about repeated rows names).
func identitiesAt(ctx context.Context, job *pipeline.Job, wanted map[int]bool) (map[int]string, error) {
	out := make(map[int]string, len(wanted))
	ord := 0
	_, err := pipeline.ValidateStream(ctx, job, pipeline.Handler{Item: func(it *pipeline.Item) error {
		if wanted[ord] {
			out[ord] = rowIdentity(it)
		}
		ord++
		return nil
	}})
	return out, err
}
