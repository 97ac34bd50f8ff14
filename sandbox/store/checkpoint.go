package store

import (
	"context"
	"time"
)

// Checkpoints (SQLite): the writer connection does not copy the WAL back
// into the database itself (its automatic checkpoint would run inside the
// write lock, at the commit that crosses the threshold, with an fsync of
// the database file). A goroutine does it instead with a PASSIVE
// checkpoint after commits, at most every checkpointEvery, while writers
// go on appending to the WAL (then a second one, short, under the write
// lock, for the frames appended meanwhile); the writer's automatic checkpoint stays as a
// backstop at a larger threshold (autoCheckpointPages) in case this one
// falls behind. Durability does not change: a commit is in the WAL before
// Tx returns, whoever copies it later.

const (
	checkpointEvery     = 100 * time.Millisecond
	autoCheckpointPages = 8000 // 32 MB of WAL with 4 KB pages
)

type checkpointer struct {
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// startCheckpointer starts the checkpoint goroutine of a SQLite store.
func (s *Store) startCheckpointer() {
	// A connection of its own (the readers' pool has one more for it), so
	// a checkpoint never waits for a reader to be free.
	conn, err := s.r.Conn(context.Background())
	if err != nil {
		return // the writer's automatic checkpoints do it
	}
	c := &checkpointer{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.ckpt = c
	go func() {
		defer close(c.done)
		defer conn.Close()
		ctx := context.Background()
		for {
			select {
			case <-c.stop:
				return
			case <-c.kick:
			}
			// The bulk outside the write lock; then what was appended
			// meanwhile, holding it, so the WAL is wholly copied and the
			// next write transaction starts it over instead of growing it.
			_, _ = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			s.mu.Lock()
			_, _ = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
			s.mu.Unlock()
			select {
			case <-c.stop:
				return
			case <-time.After(checkpointEvery):
			}
		}
	}()
}

// committed tells the checkpointer that the WAL grew.
func (s *Store) committed() {
	if s.ckpt == nil {
		return
	}
	select {
	case s.ckpt.kick <- struct{}{}:
	default:
	}
}

// stopCheckpointer ends the goroutine (Close: the last connection to
// close checkpoints what is left).
func (s *Store) stopCheckpointer() {
	if s.ckpt == nil {
		return
	}
	close(s.ckpt.stop)
	<-s.ckpt.done
	s.ckpt = nil
}
