package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// CacheOpts are a Cache's stored form and size. Encode and Decode default
// to plain encoding/json; a module that stores less than it serves
// (derived fields left out) rebuilds them in Decode. Size bounds the
// decoded documents kept (0 = the store's Options.CacheSize): big
// documents (a batch of 1000 items) want a small one.
type CacheOpts[T any] struct {
	Encode func(account, id string, v *T) ([]byte, error)
	Decode func(account, id string, raw []byte) (*T, error)
	Size   int
}

// Cache serves the documents of one kind decoded, keeping at most
// Options.CacheSize of them (the recently used ones; two generations of
// maps, the older dropped when the newer fills). Writes go through Put,
// which installs the new value once its transaction commits. On a shared
// store (PostgreSQL) the cache is off: every Get reads the database.
//
// Values handed out are shared: callers must not modify them (copy, change
// the copy, Put the copy).
type Cache[T any] struct {
	s     *Store
	kind  string
	codec CacheOpts[T]
	max   int // 0 = off

	mu       sync.Mutex
	cur, old map[cacheKey]*T
	gen      uint64 // bumped by every install: a reader's fill is dropped if it changed
}

type cacheKey struct{ account, id string }

// NewCache returns the cache of kind on s.
func NewCache[T any](s *Store, kind string, opts CacheOpts[T]) *Cache[T] {
	c := &Cache[T]{s: s, kind: kind, codec: opts, cur: map[cacheKey]*T{}, old: map[cacheKey]*T{}}
	if !s.Shared() && s.opts.CacheSize > 0 {
		c.max = s.opts.CacheSize
		if opts.Size > 0 {
			c.max = opts.Size
		}
	}
	return c
}

// Kind is the store kind the cache serves.
func (c *Cache[T]) Kind() string { return c.kind }

// Len is the number of documents held (tests).
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

func (c *Cache[T]) decode(account, id string, raw []byte) (*T, error) {
	if c.codec.Decode != nil {
		v, err := c.codec.Decode(account, id, raw)
		if err != nil {
			return nil, fmt.Errorf("store: decode %s/%s/%s: %w", c.kind, account, id, err)
		}
		return v, nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("store: decode %s/%s/%s: %w", c.kind, account, id, err)
	}
	return v, nil
}

// lookup returns the cached value and the generation (caller fills only if
// it is unchanged).
func (c *Cache[T]) lookup(k cacheKey) (*T, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[k]; ok {
		return v, c.gen
	}
	if v, ok := c.old[k]; ok {
		c.insert(k, v)
		return v, c.gen
	}
	return nil, c.gen
}

// insert puts k in the newer generation (caller holds mu).
func (c *Cache[T]) insert(k cacheKey, v *T) {
	if len(c.cur) >= (c.max+1)/2 {
		c.old, c.cur = c.cur, make(map[cacheKey]*T, (c.max+1)/2)
	}
	c.cur[k] = v
}

func (c *Cache[T]) fill(k cacheKey, v *T, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if _, ok := c.cur[k]; !ok {
		delete(c.old, k)
		c.insert(k, v)
	}
}

// install sets (v != nil) or drops k after a commit.
func (c *Cache[T]) install(k cacheKey, v *T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.old, k)
	if v == nil {
		delete(c.cur, k)
		return
	}
	c.insert(k, v)
}

// Get returns the committed document (account, id), nil when there is none.
func (c *Cache[T]) Get(ctx context.Context, account, id string) (*T, error) {
	k := cacheKey{account, id}
	var gen uint64
	if c.max > 0 {
		var v *T
		if v, gen = c.lookup(k); v != nil {
			return v, nil
		}
	}
	raw, err := c.s.GetRaw(ctx, c.kind, account, id)
	if err != nil || raw == nil {
		return nil, err
	}
	v, err := c.decode(account, id, raw)
	if err != nil {
		return nil, err
	}
	if c.max > 0 {
		c.fill(k, v, gen)
	}
	return v, nil
}

// TxGet returns the document as the transaction sees it (its own writes
// included), nil when there is none.
func (c *Cache[T]) TxGet(tx *Tx, account, id string) (*T, error) {
	k := cacheKey{account, id}
	own := tx.written[docKey{c.kind, account, id}]
	if c.max > 0 && !own {
		if v, _ := c.lookup(k); v != nil {
			return v, nil
		}
	}
	raw, err := tx.GetRaw(c.kind, account, id)
	if err != nil || raw == nil {
		return nil, err
	}
	v, err := c.decode(account, id, raw)
	if err != nil {
		return nil, err
	}
	if c.max > 0 && !own {
		// Read under the writers' lock, without this transaction's writes:
		// the committed value, which no other writer can change meanwhile.
		c.mu.Lock()
		if _, ok := c.cur[k]; !ok {
			delete(c.old, k)
			c.insert(k, v)
		}
		c.mu.Unlock()
	}
	return v, nil
}

// Encode is the stored form of v.
func (c *Cache[T]) Encode(account, id string, v *T) ([]byte, error) {
	if c.codec.Encode != nil {
		return c.codec.Encode(account, id, v)
	}
	return json.Marshal(v)
}

// Put writes v under (account, id) in tx; the cache serves it once tx
// commits. v must not be modified afterwards.
func (c *Cache[T]) Put(tx *Tx, account, id string, v *T) error {
	raw, err := c.Encode(account, id, v)
	if err != nil {
		return fmt.Errorf("store: encode %s/%s/%s: %w", c.kind, account, id, err)
	}
	return c.PutRaw(tx, account, id, raw, v)
}

// PutRaw is Put with the stored form already encoded (raw must be v's).
func (c *Cache[T]) PutRaw(tx *Tx, account, id string, raw []byte, v *T) error {
	if err := tx.PutRaw(c.kind, account, id, raw); err != nil {
		return err
	}
	if c.max > 0 {
		k := cacheKey{account, id}
		tx.OnCommit(func() { c.install(k, v) })
	}
	return nil
}

// Delete removes (account, id) in tx (and from the cache once it commits).
func (c *Cache[T]) Delete(tx *Tx, account, id string) error {
	if err := tx.Delete(c.kind, account, id); err != nil {
		return err
	}
	if c.max > 0 {
		k := cacheKey{account, id}
		tx.OnCommit(func() { c.install(k, nil) })
	}
	return nil
}

// GetMany returns the committed documents of ids (those that exist), the
// cached ones from the cache and the others in a few queries.
func (c *Cache[T]) GetMany(ctx context.Context, account string, ids []string) (map[string]*T, error) {
	return c.getMany(nil, ctx, account, ids)
}

// TxGetMany is GetMany as the transaction sees the documents.
func (c *Cache[T]) TxGetMany(tx *Tx, account string, ids []string) (map[string]*T, error) {
	return c.getMany(tx, tx.ctx, account, ids)
}

func (c *Cache[T]) getMany(tx *Tx, ctx context.Context, account string, ids []string) (map[string]*T, error) {
	out := make(map[string]*T, len(ids))
	var miss []string
	var gen uint64
	if c.max > 0 {
		c.mu.Lock()
		gen = c.gen
		c.mu.Unlock()
	}
	for _, id := range ids {
		if c.max > 0 && (tx == nil || !tx.written[docKey{c.kind, account, id}]) {
			if v, _ := c.lookup(cacheKey{account, id}); v != nil {
				out[id] = v
				continue
			}
		}
		miss = append(miss, id)
	}
	if len(miss) == 0 {
		return out, nil
	}
	query := c.s.r.QueryContext
	if tx != nil {
		query = tx.tx.QueryContext
	}
	err := c.s.getRawMany(ctx, query, c.kind, account, miss, func(id string, raw []byte) error {
		v, err := c.decode(account, id, raw)
		if err != nil {
			return err
		}
		out[id] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.max > 0 {
		for _, id := range miss {
			v := out[id]
			if v == nil || (tx != nil && tx.written[docKey{c.kind, account, id}]) {
				continue
			}
			if tx != nil {
				c.mu.Lock()
				if _, ok := c.cur[cacheKey{account, id}]; !ok {
					c.insert(cacheKey{account, id}, v)
				}
				c.mu.Unlock()
			} else {
				c.fill(cacheKey{account, id}, v, gen)
			}
		}
	}
	return out, nil
}

// DocRow is one document of PutMany.
type DocRow[T any] struct {
	ID  string
	Raw []byte // the stored form of V (Encode)
	V   *T
	// Index, when set, is also written as the document's own index row
	// (the cache's kind, the account, ID), as PutIndex would: in the same
	// row as the document, by the same statement.
	Index *Index
}

// PutMany writes several documents of one account in a few statements
// (PutRaw for each, batched), with their index rows when given.
func (c *Cache[T]) PutMany(tx *Tx, account string, rows []DocRow[T]) error {
	const per = 100
	var ixs []IndexRow
	if tx.s.stmts != nil { // SQLite: row by row (see PutIndexes)
		for _, r := range rows {
			var err error
			if r.Index != nil {
				err = tx.putRawIndexed(c.kind, account, r.ID, r.Raw, *r.Index)
			} else {
				err = tx.PutRaw(c.kind, account, r.ID, r.Raw)
			}
			if err != nil {
				return err
			}
		}
	} else {
		for _, r := range rows {
			if r.Index != nil {
				ixs = append(ixs, IndexRow{ID: r.ID, Index: *r.Index})
			}
		}
	}
	for i := 0; tx.s.stmts == nil && i < len(rows); i += per {
		part := rows[i:min(len(rows), i+per)]
		args := make([]any, 0, 5*len(part))
		for _, r := range part {
			args = append(args, c.kind, account, r.ID, r.Raw, tx.now)
			tx.markWritten(c.kind, account, r.ID)
		}
		q := tx.s.be.rebind("INSERT INTO doc(kind, account, id, json, updated_at) VALUES " + values(len(part), 5) +
			" ON CONFLICT(kind, account, id) DO UPDATE SET json = excluded.json, updated_at = excluded.updated_at")
		if _, err := tx.execSQL(q, args...); err != nil {
			return fmt.Errorf("store: put %d documents %s/%s: %w", len(part), c.kind, account, err)
		}
	}
	if len(ixs) > 0 {
		if err := tx.PutIndexes(c.kind, account, ixs); err != nil {
			return err
		}
	}
	if c.max > 0 {
		tx.OnCommit(func() {
			for _, r := range rows {
				c.install(cacheKey{account, r.ID}, r.V)
			}
		})
	}
	return nil
}

// TakenError is InsertNew's answer when a key is taken.
type TakenError struct{ Kind, Account, ID string }

func (e *TakenError) Error() string {
	return fmt.Sprintf("store: %s/%s/%s exists already", e.Kind, e.Account, e.ID)
}

// InsertNew writes rows as PutMany does, but only where their keys are
// free (no document nor index row there), so that a caller who knows the
// keys new but for a race need not look them up first: the first key
// found taken makes it remove the rows it inserted and return a
// *TakenError naming it; what was there is not changed, and if the call
// had written nothing before, it has written nothing (Tx.Final). Rows
// are inserted in order, one statement each.
func (c *Cache[T]) InsertNew(tx *Tx, account string, rows []DocRow[T]) error {
	wrote := tx.wrote
	for i, r := range rows {
		var n int64
		var err error
		if ix := r.Index; ix != nil {
			owner := ix.Owner
			if owner == r.ID {
				owner = ""
			}
			n, err = tx.execN("insDocIdx", c.kind, account, r.ID, r.Raw, tx.now, owner, ix.N, ix.S1, ix.S2, ix.S3, ix.S4, ix.I1, ix.I2, ix.I3, ix.I4)
		} else {
			n, err = tx.execN("insDoc", c.kind, account, r.ID, r.Raw, tx.now)
		}
		if err != nil {
			return fmt.Errorf("store: insert %s/%s/%s: %w", c.kind, account, r.ID, err)
		}
		if n == 0 {
			for _, p := range rows[:i] {
				if err := tx.exec("delRow", c.kind, account, p.ID); err != nil {
					return fmt.Errorf("store: remove %s/%s/%s inserted before %s was found taken: %w", c.kind, account, p.ID, r.ID, err)
				}
			}
			tx.wrote = wrote
			return &TakenError{Kind: c.kind, Account: account, ID: r.ID}
		}
		tx.markWritten(c.kind, account, r.ID)
	}
	for _, r := range rows {
		if r.Index != nil {
			tx.touch(c.kind, account)
			break
		}
	}
	if c.max > 0 {
		tx.OnCommit(func() {
			for _, r := range rows {
				c.install(cacheKey{account, r.ID}, r.V)
			}
		})
	}
	return nil
}
