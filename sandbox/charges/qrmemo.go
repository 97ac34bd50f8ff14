package charges

import "sync"

// qrMemo remembers the QR images drawn for documents read back from the
// store, which do not hold them (withQR): on a shared store, where every
// read decodes the document, or once the cache has dropped one, reading a
// carnet again does not draw its 12 images again. It is bounded like the
// store's caches: two generations of at most qrMemoMax images (some 1.2 KB
// each), the older dropped when the newer fills.
var qrMemo memoQR

const qrMemoMax = 2048

type memoQR struct {
	mu       sync.Mutex
	cur, old map[string]string // BR Code -> qrImage(BR Code)
}

// image is qrImage(brcode), remembered.
func (q *memoQR) image(brcode string) (string, error) {
	q.mu.Lock()
	img, ok := q.cur[brcode]
	if !ok {
		if img, ok = q.old[brcode]; ok {
			q.putLocked(brcode, img)
		}
	}
	q.mu.Unlock()
	if ok {
		return img, nil
	}
	img, err := qrImage(brcode)
	if err != nil {
		return "", err
	}
	q.mu.Lock()
	q.putLocked(brcode, img)
	q.mu.Unlock()
	return img, nil
}

func (q *memoQR) putLocked(k, v string) {
	if len(q.cur) >= qrMemoMax || q.cur == nil {
		q.old, q.cur = q.cur, make(map[string]string, qrMemoMax)
	}
	q.cur[k] = v
}

// len is the number of images held (tests).
func (q *memoQR) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.cur) + len(q.old)
}
