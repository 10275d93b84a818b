package localapi

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// tickInterval is how often a rate's moving averages decay, as in
// go-metrics' EWMAs (which ngrok's figures come from).
const tickInterval = 5 * time.Second

// reservoirSize bounds the durations a Meter keeps for its percentiles,
// as go-metrics' uniform sample does.
const reservoirSize = 1028

// Meter counts a tunnel's connections and HTTP requests: how many, how
// many open, their rates over 1, 5 and 15 minutes, and the percentiles
// of their durations. Its methods are safe for concurrent use and cheap
// enough for every connection and request: counters are atomics, and
// the rates decay lazily, when a method or Snapshot runs, with no
// goroutine of their own.
type Meter struct {
	connCount atomic.Int64
	connGauge atomic.Int64
	httpCount atomic.Int64
	connRate  *rate
	httpRate  *rate
	connTimes *reservoir
	httpTimes *reservoir
	now       func() time.Time
}

// NewMeter returns a Meter that reads the time from now (time.Now when
// nil).
func NewMeter(now func() time.Time) *Meter {
	if now == nil {
		now = time.Now
	}
	start := now()
	return &Meter{
		connRate:  newRate(start),
		httpRate:  newRate(start),
		connTimes: &reservoir{},
		httpTimes: &reservoir{},
		now:       now,
	}
}

// ConnOpened counts a connection the tunnel accepted.
func (m *Meter) ConnOpened() {
	m.connCount.Add(1)
	m.connGauge.Add(1)
	m.connRate.mark(m.now())
}

// ConnClosed counts the end of a connection ConnOpened counted, open
// for d.
func (m *Meter) ConnClosed(d time.Duration) {
	m.connGauge.Add(-1)
	m.connTimes.add(d)
}

// HTTPDone counts an HTTP request the tunnel answered in d.
func (m *Meter) HTTPDone(d time.Duration) {
	m.httpCount.Add(1)
	m.httpRate.mark(m.now())
	m.httpTimes.add(d)
}

// MeterSnapshot is a Meter's figures at one time, as the local API
// shows them in a tunnel's "metrics".
type MeterSnapshot struct {
	Conns ConnMetrics `json:"conns"`
	HTTP  HTTPMetrics `json:"http"`
}

// ConnMetrics are a tunnel's connections: Count since it started, Gauge
// open now, the rates (per second, moving averages over 1, 5 and 15
// minutes) and percentiles of the closed ones' durations in nanoseconds.
type ConnMetrics struct {
	Count  int64   `json:"count"`
	Gauge  int64   `json:"gauge"`
	Rate1  float64 `json:"rate1"`
	Rate5  float64 `json:"rate5"`
	Rate15 float64 `json:"rate15"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
}

// HTTPMetrics are a tunnel's HTTP requests: Count since it started, the
// rates (per second, moving averages over 1, 5 and 15 minutes) and
// percentiles of their durations in nanoseconds.
type HTTPMetrics struct {
	Count  int64   `json:"count"`
	Rate1  float64 `json:"rate1"`
	Rate5  float64 `json:"rate5"`
	Rate15 float64 `json:"rate15"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
}

// Snapshot returns the Meter's figures now; a nil Meter's are zero.
func (m *Meter) Snapshot() MeterSnapshot {
	if m == nil {
		return MeterSnapshot{}
	}
	now := m.now()
	var s MeterSnapshot
	s.Conns.Count = m.connCount.Load()
	s.Conns.Gauge = m.connGauge.Load()
	r := m.connRate.rates(now)
	s.Conns.Rate1, s.Conns.Rate5, s.Conns.Rate15 = r[0], r[1], r[2]
	p := m.connTimes.percentiles()
	s.Conns.P50, s.Conns.P90, s.Conns.P95, s.Conns.P99 = p[0], p[1], p[2], p[3]
	s.HTTP.Count = m.httpCount.Load()
	r = m.httpRate.rates(now)
	s.HTTP.Rate1, s.HTTP.Rate5, s.HTTP.Rate15 = r[0], r[1], r[2]
	p = m.httpTimes.percentiles()
	s.HTTP.P50, s.HTTP.P90, s.HTTP.P95, s.HTTP.P99 = p[0], p[1], p[2], p[3]
	return s
}

// rateAlphas are the EWMA weights of one tick for 1, 5 and 15 minutes.
var rateAlphas = [3]float64{
	1 - math.Exp(-tickInterval.Seconds()/60/1),
	1 - math.Exp(-tickInterval.Seconds()/60/5),
	1 - math.Exp(-tickInterval.Seconds()/60/15),
}

// rate is three exponentially weighted moving averages of events per
// second, ticked every tickInterval as the events or a read find the
// interval passed.
type rate struct {
	uncounted atomic.Int64
	// nextTick is when the next tick is due, in Unix nanoseconds.
	nextTick atomic.Int64

	mu     sync.Mutex
	ticked bool
	avg    [3]float64
}

func newRate(start time.Time) *rate {
	r := &rate{}
	r.nextTick.Store(start.Add(tickInterval).UnixNano())
	return r
}

// mark counts one event at now.
func (r *rate) mark(now time.Time) {
	r.tick(now)
	r.uncounted.Add(1)
}

// rates returns the averages at now.
func (r *rate) rates(now time.Time) [3]float64 {
	r.tick(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.avg
}

// tick applies the ticks due by now: the first one with the events
// counted since the last, the others with none.
func (r *rate) tick(now time.Time) {
	at := now.UnixNano()
	if at < r.nextTick.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next := r.nextTick.Load()
	if at < next {
		return
	}
	n := (at-next)/int64(tickInterval) + 1
	r.nextTick.Store(next + n*int64(tickInterval))
	instant := float64(r.uncounted.Swap(0)) / tickInterval.Seconds()
	for i, alpha := range rateAlphas {
		if r.ticked {
			r.avg[i] += alpha * (instant - r.avg[i])
		} else {
			r.avg[i] = instant
		}
		r.avg[i] *= math.Pow(1-alpha, float64(n-1))
	}
	r.ticked = true
}

// reservoir is a uniform sample of at most reservoirSize durations
// (Vitter's algorithm R).
type reservoir struct {
	mu     sync.Mutex
	seen   int64
	values []int64
}

func (s *reservoir) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen++
	if len(s.values) < reservoirSize {
		s.values = append(s.values, int64(d))
		return
	}
	if i := rand.Int64N(s.seen); i < reservoirSize {
		s.values[i] = int64(d)
	}
}

// percentiles returns the 50th, 90th, 95th and 99th percentiles of the
// sample, interpolated as go-metrics does, or zeros when it is empty.
func (s *reservoir) percentiles() [4]float64 {
	s.mu.Lock()
	values := slices.Clone(s.values)
	s.mu.Unlock()
	var out [4]float64
	if len(values) == 0 {
		return out
	}
	slices.Sort(values)
	size := float64(len(values))
	for i, p := range [4]float64{0.5, 0.9, 0.95, 0.99} {
		pos := p * (size + 1)
		switch {
		case pos < 1:
			out[i] = float64(values[0])
		case pos >= size:
			out[i] = float64(values[len(values)-1])
		default:
			lower := float64(values[int(pos)-1])
			upper := float64(values[int(pos)])
			out[i] = lower + (pos-math.Floor(pos))*(upper-lower)
		}
	}
	return out
}
