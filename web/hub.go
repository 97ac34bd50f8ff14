package web

import (
	"sync"
)

// hub fans a run's progress out to the browsers watching it (Server-Sent
// Events). Each subscriber gets the latest state; a slow browser skips
// states rather than holding the run up.
type hub struct {
	mu     sync.Mutex
	subs   map[int64]map[chan []byte]struct{}
	closed bool
}

func newHub() *hub { return &hub{subs: map[int64]map[chan []byte]struct{}{}} }

func (h *hub) subscribe(run int64) (chan []byte, func()) {
	ch := make(chan []byte, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(ch)
		return ch, func() {}
	}
	if h.subs[run] == nil {
		h.subs[run] = map[chan []byte]struct{}{}
	}
	h.subs[run][ch] = struct{}{}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[run][ch]; ok {
			delete(h.subs[run], ch)
			close(ch)
		}
	}
}

// publish sends msg to every subscriber of run, replacing a state it has
// not read yet.
func (h *hub) publish(run int64, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[run] {
		select {
		case ch <- msg:
		default:
			select {
			case <-ch:
			default:
			}
			select {
			case ch <- msg:
			default:
			}
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, m := range h.subs {
		for ch := range m {
			close(ch)
		}
	}
	h.subs = map[int64]map[chan []byte]struct{}{}
}
