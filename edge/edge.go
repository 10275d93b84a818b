package edge

import (
	"context"
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/sluicehq/sluice/schemas"
)

// Edge serves agents and the public traffic of their endpoints. Make one
// with New; run ServeAgents on the agents' listener, and serve
// HTTPHandler and HTTPSHandler on the public ones.
type Edge struct {
	cfg     Config
	catalog *schemas.Catalogue
	// retryAfter is the Retry-After of a request refused for its
	// account's rate: Limits.RefusalHold in whole seconds, at least 1.
	retryAfter string

	// ctx ends when the edge stops: every session and TCP listener ends
	// with it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the sessions and listeners

	mu       sync.Mutex
	sessions map[string]*session      // by tunnel session id
	hosts    map[string]*endpoint     // "http:" or "https:" and the host
	ports    map[int]*endpoint        // TCP endpoints by port
	conns    map[string]int           // public connections open, by account
	rates    map[string]*rate.Limiter // public requests, by account
	closing  bool
	// labeled are the labeled tunnels of each account here; a slice is
	// never changed in place, so that it is read without the lock.
	labeled map[string][]*endpoint
	// turn takes the tunnels of a group in turn (pickTunnel).
	turn atomic.Uint64
	// routing is what the routes of HTTPS edges serve, followed from
	// Config.Routing once the edge serves agents (followRouting).
	routing       *routing
	routingFollow sync.Once

	// buffers are what responses are copied through, reused: a new 32
	// KiB buffer a request was a third of the edge's allocation (bench
	// tunnel's profile).
	buffers sync.Pool
	// streamBuffers are what TCP connections are copied through.
	streamBuffers sync.Pool
	// objects are the buffers request events' objects are written in.
	objects sync.Pool

	// handshakes holds a token for each agent connection not yet
	// authenticated (maxHandshakes): a stranger opening connections
	// without ever authenticating holds at most that many goroutines.
	handshakes chan struct{}
	// heartbeatCheck starts Edge.checkHeartbeats once.
	heartbeatCheck sync.Once
	// forwarder, with Config.Peers, sends requests to the edges serving
	// their endpoints.
	forwarder *forwarder
	// logins runs the openid-connect actions; nil without
	// Config.AppSessions.
	logins *logins

	Metrics *Metrics
}

// New returns an edge; it starts nothing.
func New(cfg Config) (*Edge, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Edge{
		cfg: cfg, catalog: schemas.Default(), ctx: ctx, cancel: cancel,
		retryAfter:    strconv.Itoa(max(1, int(math.Ceil(cfg.Limits.RefusalHold.Seconds())))),
		sessions:      make(map[string]*session),
		hosts:         make(map[string]*endpoint),
		ports:         make(map[int]*endpoint),
		conns:         make(map[string]int),
		rates:         make(map[string]*rate.Limiter),
		labeled:       make(map[string][]*endpoint),
		handshakes:    make(chan struct{}, maxHandshakes),
		Metrics:       newMetrics(),
		buffers:       sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }},
		streamBuffers: sync.Pool{New: func() any { b := make([]byte, streamBufferSize); return &b }},
		objects:       sync.Pool{New: func() any { b := make([]byte, 0, 2<<10); return &b }},
	}
	if cfg.Peers != nil {
		e.forwarder = newForwarder(e)
	}
	if cfg.AppSessions != nil {
		e.logins = newLogins(&e.cfg, e.now)
	}
	e.routing = newRouting(e.policyOptions()...)
	return e, nil
}

// ServeAgents accepts agents' connections on ln until ctx ends or ln
// fails; ln must hand out TLS connections (tls.NewListener). It returns
// once ln is closed; the sessions go on until Close.
func (e *Edge) ServeAgents(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	e.followRouting()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		select {
		case e.handshakes <- struct{}{}:
		default:
			// As many connections as the edge takes are still to
			// authenticate: this one waits for none of them.
			e.Metrics.agentHandshakeFailed.Add(1)
			_ = conn.Close()
			continue
		}
		if !e.track() {
			<-e.handshakes
			_ = conn.Close()
			return nil
		}
		go func() {
			defer e.wg.Done()
			e.serveAgent(conn)
		}()
	}
}

// track counts a goroutine the edge waits for in Close; false once the
// edge is closing.
func (e *Edge) track() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return false
	}
	e.wg.Add(1)
	return true
}

// Close ends every session (their agents reconnect, to this edge's
// successor or another) and every TCP endpoint, and waits for them, at
// most until ctx ends.
func (e *Edge) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	e.cancel()
	if e.forwarder != nil {
		e.forwarder.transport.CloseIdleConnections()
	}
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hostKey is the key of an HTTP endpoint in Edge.hosts.
func hostKey(scheme, host string) string { return scheme + ":" + strings.ToLower(host) }

// lookupHost returns the endpoint serving host on the scheme's listener.
func (e *Edge) lookupHost(scheme, host string) *endpoint {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hosts[hostKey(scheme, host)]
}

// openConn counts a public connection of the account, and reports
// whether it is within the account's limit.
func (e *Edge) openConn(account string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conns[account] >= e.cfg.Limits.Connections {
		return false
	}
	e.conns[account]++
	return true
}

// allowRequest takes a public request of the account from its rate at
// this edge, and reports whether it was within it.
func (e *Edge) allowRequest(account string) bool {
	if e.cfg.Limits.RequestRate < 0 {
		return true
	}
	e.mu.Lock()
	l, ok := e.rates[account]
	if !ok {
		if len(e.rates) >= maxRateAccounts {
			clear(e.rates) // a full bucket again for each: lenient, and bounded
		}
		l = rate.NewLimiter(rate.Limit(e.cfg.Limits.RequestRate), e.cfg.Limits.RequestBurst)
		e.rates[account] = l
	}
	e.mu.Unlock()
	return l.Allow()
}

// maxRateAccounts bounds the accounts whose request rates an edge keeps.
const maxRateAccounts = 100_000

// closeConn uncounts a public connection of the account.
func (e *Edge) closeConn(account string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conns[account]--; e.conns[account] <= 0 {
		delete(e.conns, account)
	}
}

// maxHandshakes bounds the agent connections of an edge still doing
// their TLS handshake and Auth, each for at most handshakeTimeout.
const maxHandshakes = 1024

// now is the edge's clock, in UTC.
func (e *Edge) now() time.Time { return e.cfg.Now().UTC() }

// ServesHTTPS reports whether an HTTPS endpoint is bound at name here,
// or an HTTPS edge has a hostport there.
func (e *Edge) ServesHTTPS(name string) bool {
	return e.lookupHost("https", name) != nil || e.routing.serves(name)
}

// followRouting starts following Config.Routing, once, until the edge
// closes.
func (e *Edge) followRouting() {
	e.routingFollow.Do(func() {
		if e.cfg.Routing == nil || !e.track() {
			return
		}
		go func() {
			defer e.wg.Done()
			e.cfg.Routing.FollowRouting(e.ctx, e.cfg.Log, e.routing.apply, nil)
		}()
	})
}

// heartbeatCheckEvery is how often the edge looks for sessions whose
// agents stopped beating.
const heartbeatCheckEvery = time.Second

// startHeartbeatCheck starts checkHeartbeats, once.
func (e *Edge) startHeartbeatCheck() {
	e.heartbeatCheck.Do(func() {
		if e.track() {
			go func() {
				defer e.wg.Done()
				e.checkHeartbeats()
			}()
		}
	})
}

// checkHeartbeats ends, until the edge closes, each session whose agent
// has sent no heartbeat for its interval and tolerance. One goroutine of
// the edge checks them all: a session holds no timer nor goroutine of its
// own for it.
func (e *Edge) checkHeartbeats() {
	tick := time.NewTicker(heartbeatCheckEvery)
	defer tick.Stop()
	var due []*session
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		due = due[:0]
		e.mu.Lock()
		for _, s := range e.sessions {
			if last := s.lastBeat.Load(); last != 0 && time.Duration(now-last) > s.beatLimit {
				due = append(due, s)
			}
		}
		e.mu.Unlock()
		for _, s := range due {
			s.stop(errors.New("the agent missed its heartbeats"))
		}
	}
}
