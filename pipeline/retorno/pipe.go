package retorno

import "context"

// batchEntries is how many entries pipelined hands over at a time.
const batchEntries = 512

// pipelined runs produce (reading the run's ledger, terms and results into
// entries) in a goroutine of its own and consume (the file's records and
// retornos.db's parts) in this one, handing entries over in batches, so a
// large retorno uses both cores: each side took about half of a 100,000-
// title retorno's CPU. Entries reach consume in produce's order. An error
// of consume stops produce (its context is cancelled) and is returned;
// otherwise produce's error is.
func pipelined(ctx context.Context, produce func(context.Context, func(*Entry) error) error, consume func(*Entry) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan []Entry, 4)
	free := make(chan []Entry, 8)
	perr := make(chan error, 1)
	go func() {
		defer close(full)
		batch := make([]Entry, 0, batchEntries)
		send := func() error {
			select {
			case full <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case b := <-free:
				batch = b[:0]
			default:
				batch = make([]Entry, 0, batchEntries)
			}
			return nil
		}
		err := produce(ctx, func(e *Entry) error {
			batch = append(batch, *e)
			if len(batch) == batchEntries {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		perr <- err
	}()
	var cerr error
	for b := range full {
		for i := 0; cerr == nil && i < len(b); i++ {
			if cerr = consume(&b[i]); cerr != nil {
				cancel()
			}
		}
		clear(b) // drop the strings' references before reuse
		select {
		case free <- b:
		default:
		}
	}
	if err := <-perr; cerr == nil {
		return err
	}
	return cerr
}
