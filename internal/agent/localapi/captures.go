package localapi

import (
	"net/http"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/agent/agentconfig"
	"github.com/sluicehq/sluice/internal/defaults"
)

// MaxBodyCapture bounds the body of a captured request or response: the
// rest is not kept, and the capture says it was truncated.
const MaxBodyCapture = 10 << 20

// captureOverhead is what a capture counts against the store's bound
// besides its raw bytes and headers: its fields, its id and URI, and the
// store's bookkeeping (TestCaptureSizeIsItsMemory measures it).
const captureOverhead = 1024

// headerOverhead is what one header line costs in a parsed header map
// besides its name and value: the map's slot, the strings' and the
// slice's headers.
const headerOverhead = 96

// subscriptionBuffer is how many events a subscriber may fall behind by
// before events are dropped for it.
const subscriptionBuffer = 64

// Capture is one HTTP exchange a tunnel forwarded, as the local API
// shows it under /api/requests/http.
type Capture struct {
	ID         string `json:"id"`
	URI        string `json:"uri"`
	TunnelName string `json:"tunnel_name"`
	RemoteAddr string `json:"remote_addr"`
	// Start is when the request came in.
	Start time.Time `json:"start"`
	// Duration is how long the exchange took, in nanoseconds.
	Duration time.Duration    `json:"duration"`
	Request  CapturedRequest  `json:"request"`
	Response CapturedResponse `json:"response"`
}

// CapturedRequest is a captured request. Raw is its request line,
// headers and body as the upstream got them (base64 in JSON).
type CapturedRequest struct {
	Method  string      `json:"method"`
	Proto   string      `json:"proto"`
	Headers http.Header `json:"headers"`
	URI     string      `json:"uri"`
	Raw     []byte      `json:"raw,omitempty"`
	// BodySize is the body's size, or what of it the upstream read.
	BodySize int64 `json:"body_size"`
	// Truncated says Raw holds only the body's first bytes (or what
	// of it the upstream read).
	Truncated bool `json:"truncated,omitempty"`
}

// CapturedResponse is a captured response. Raw is its status line,
// headers and body as the upstream wrote them (base64 in JSON).
type CapturedResponse struct {
	// Status is the code and its text, "200 OK".
	Status     string      `json:"status"`
	StatusCode int         `json:"status_code"`
	Proto      string      `json:"proto"`
	Headers    http.Header `json:"headers"`
	Raw        []byte      `json:"raw,omitempty"`
	BodySize   int64       `json:"body_size"`
	// Truncated says Raw holds only the body's first bytes.
	Truncated bool `json:"truncated,omitempty"`
}

// size is what c counts against the store's bound.
func (c *Capture) size() int64 {
	return int64(len(c.Request.Raw)+len(c.Response.Raw)) + headersSize(c.Request.Headers) + headersSize(c.Response.Headers) + captureOverhead
}

// headersSize is what a parsed header map holds, as size counts it.
func headersSize(h http.Header) int64 {
	var n int64
	for k, vs := range h {
		n += int64(len(k))
		for _, v := range vs {
			n += int64(len(v)) + headerOverhead
		}
	}
	return n
}

// summary returns c without its raw bytes, for the live updates.
func (c *Capture) summary() *Capture {
	s := *c
	s.Request.Raw = nil
	s.Response.Raw = nil
	return &s
}

// CapturesConfig configures Captures.
type CapturesConfig struct {
	// MaxBytes bounds the captures held (inspect_db_size):
	// agentconfig.DefaultInspectDBSize when 0 or less.
	MaxBytes int64
	// Now reads the time (time.Now when nil).
	Now func() time.Time
}

// Captures holds the HTTP exchanges the tunnels that inspect forwarded,
// newest first, within a bound of bytes: the oldest go first. It is safe
// for concurrent use.
type Captures struct {
	maxBytes int64
	bodyCap  int64
	// inFlight bounds the bodies kept by exchanges not yet added.
	inFlight budget
	now      func() time.Time

	mu    sync.Mutex
	bytes int64
	// held are the captures, oldest first.
	held []*Capture
	byID map[string]*Capture
	subs map[*Subscription]struct{}
}

// NewCaptures returns an empty store.
func NewCaptures(cfg CapturesConfig) *Captures {
	defaults.Positive(&cfg.MaxBytes, agentconfig.DefaultInspectDBSize)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// A body may take at most a third of the store, so a capture of
	// two bodies and headers fits it.
	bodyCap := min(int64(MaxBodyCapture), cfg.MaxBytes/3)
	return &Captures{
		maxBytes: cfg.MaxBytes,
		bodyCap:  bodyCap,
		inFlight: budget{limit: cfg.MaxBytes},
		now:      cfg.Now,
		byID:     make(map[string]*Capture),
		subs:     make(map[*Subscription]struct{}),
	}
}

// add stores c, evicting the oldest captures to stay within the bound,
// and tells the subscribers. A capture larger than the bound is dropped.
func (s *Captures) add(c *Capture) {
	size := c.size()
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.maxBytes {
		return
	}
	for s.bytes+size > s.maxBytes && len(s.held) > 0 {
		oldest := s.held[0]
		s.held[0] = nil
		s.held = s.held[1:]
		delete(s.byID, oldest.ID)
		s.bytes -= oldest.size()
	}
	s.held = append(s.held, c)
	s.byID[c.ID] = c
	s.bytes += size
	s.publish(Event{Kind: EventCapture, Capture: c.summary()})
}

// Get returns the capture of id, or nil.
func (s *Captures) Get(id string) *Capture {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

// List returns at most limit captures, newest first; of the tunnel
// tunnelName only, unless it is "".
func (s *Captures) List(limit int, tunnelName string) []*Capture {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Capture, 0, min(limit, len(s.held)))
	for i := len(s.held) - 1; i >= 0 && len(out) < limit; i-- {
		if c := s.held[i]; tunnelName == "" || c.TunnelName == tunnelName {
			out = append(out, c)
		}
	}
	return out
}

// Clear removes every capture.
func (s *Captures) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = nil
	s.byID = make(map[string]*Capture)
	s.bytes = 0
	s.publish(Event{Kind: EventClear})
}
