package pix

import (
	"context"

	"remessa/sandbox/store"
)

// locBlockSize is how many loc ids the module reserves from the store's
// sequence at a time for the batches processed by their PUT (reserveLocs).
const locBlockSize = 10_000

// reserveLocs hands out n consecutive loc ids (n > 0) from the module's
// block, reserving a new block from the store's sequence (pix.loc, the one
// allocLocs advances inside the write transactions) in a transaction of
// its own when what is left of the block is too short. The ids of a
// block are the module's alone, also across instances over one
// PostgreSQL, so a batch's charges are built with their locations before
// the batch's write transaction; ids handed out to a batch that is then
// refused, and what is left of a block at a stop, are never used (loc ids
// are unique, not dense).
func (m *Module) reserveLocs(ctx context.Context, n int) (int64, error) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if m.locNext == 0 || m.locEnd-m.locNext+1 < int64(n) {
		k := max(n, locBlockSize)
		var first int64
		err := m.st.Tx(ctx, func(tx *store.Tx) error {
			var err error
			first, err = tx.NextSeqN("pix.loc", k)
			return err
		})
		if err != nil {
			return 0, err
		}
		m.locNext, m.locEnd = first, first+int64(k)-1
	}
	first := m.locNext
	m.locNext += int64(n)
	return first, nil
}
