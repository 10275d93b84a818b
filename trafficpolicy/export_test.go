package trafficpolicy

import "time"

// withClock makes the policy read the time from now instead of time.Now.
func withClock(now func() time.Time) Option { return func(p *Policy) { p.now = now } }

// len returns how many buckets the window holds, expired or not.
func (w *window) len() int {
	n := 0
	for i := range w.shards {
		w.shards[i].mu.Lock()
		n += len(w.shards[i].index)
		w.shards[i].mu.Unlock()
	}
	return n
}
