package apiconv

import (
	"sync"
)

// refusal says why admission refused an ingest request, or that it did not.
type refusal int

const (
	admitted refusal = iota
	// refusedRequests: the process has MaxInFlight requests in flight (503).
	refusedRequests
	// refusedBytes: the bodies in flight of all accounts hold the process's
	// whole MaxBytesInFlight (503).
	refusedBytes
	// refusedAccountRequests: the account has its share of requests in
	// flight, MaxAccountInFlight (429).
	refusedAccountRequests
	// refusedAccountBytes: the account's bodies in flight hold its share of
	// bytes, MaxAccountBytesInFlight (429).
	refusedAccountBytes
	// refusedAccountManagement: the account has its share of management
	// requests (reads, and changes with a body) in flight,
	// MaxAccountManagementInFlight (429).
	refusedAccountManagement
)

// metricReason is the reason label of sluice_ingest_refused_requests_total.
func (r refusal) metricReason() string {
	switch r {
	case refusedRequests:
		return "requests"
	case refusedBytes:
		return "bytes"
	case refusedAccountRequests:
		return "account_requests"
	case refusedAccountBytes:
		return "account_bytes"
	case refusedAccountManagement:
		return "account_management"
	}
	return "admitted"
}

// admission is the front door of ingest: it bounds the requests in flight
// and the body bytes they hold, for the process and for each account, so
// that one account can neither take every slot nor every byte. Management
// reads and requests with a body go through it too, with a share of their
// own for each account (and none of the process's ingest slots), their
// bodies counted in the same bytes, the process's and the account's. The
// counts sit under one mutex, held for a few map operations twice per small
// request (admit with its first grant, release) and once per further grant
// of a large body.
type admission struct {
	maxRequests, accountRequests int
	accountManagement            int
	maxBytes, accountBytes       int64

	mu       sync.Mutex
	requests int // ingest requests in flight
	bytes    int64
	accounts map[string]*accountShare // accounts with requests in flight only
}

// accountShare is what one account holds now.
type accountShare struct {
	requests   int // ingest requests
	management int // management reads, and management requests with a body
	bytes      int64
}

func newAdmission(cfg DoorConfig) *admission {
	return &admission{
		maxRequests:       cfg.MaxInFlight,
		accountRequests:   cfg.MaxAccountInFlight,
		accountManagement: cfg.MaxAccountManagementInFlight,
		maxBytes:          cfg.MaxBytesInFlight,
		accountBytes:      cfg.MaxAccountBytesInFlight,
		accounts:          make(map[string]*accountShare),
	}
}

// admit lets a request of the account in, with a first grant of bytes for
// its body, or says why not. The process's bounds are checked before the
// account's: a full process is sluice's problem (503), an account at its
// share the account's (429).
func (a *admission) admit(account string, grant int64) (*Ticket, refusal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	share := a.accounts[account]
	if share == nil {
		share = &accountShare{}
	}
	switch {
	case a.requests >= a.maxRequests:
		return nil, refusedRequests
	case share.requests >= a.accountRequests:
		return nil, refusedAccountRequests
	}
	if r := a.reserve(share, grant); r != admitted {
		return nil, r
	}
	a.requests++
	share.requests++
	a.accounts[account] = share
	return &Ticket{admission: a, account: account, share: share, bytes: grant}, admitted
}

// admitManagement lets a management request of the account in (a read,
// with no grant, or a change, with a first grant of bytes for its body),
// or says why not. It takes a
// slot of the account's management share, not one of the process's ingest
// slots, so that ingest and management do not crowd each other out; the
// bytes count as an ingest body's do.
func (a *admission) admitManagement(account string, grant int64) (*Ticket, refusal) {
	a.mu.Lock()
	defer a.mu.Unlock()
	share := a.accounts[account]
	if share == nil {
		share = &accountShare{}
	}
	if share.management >= a.accountManagement {
		return nil, refusedAccountManagement
	}
	if r := a.reserve(share, grant); r != admitted {
		return nil, r
	}
	share.management++
	a.accounts[account] = share
	return &Ticket{admission: a, account: account, share: share, bytes: grant, management: true}, admitted
}

// reserve adds n bytes to the share and the process's count if both stay
// within their bounds. a.mu is held.
func (a *admission) reserve(share *accountShare, n int64) refusal {
	switch {
	case a.bytes+n > a.maxBytes:
		return refusedBytes
	case share.bytes+n > a.accountBytes:
		return refusedAccountBytes
	}
	a.bytes += n
	share.bytes += n
	return admitted
}

// inFlight returns the requests and body bytes in flight, for the gauges.
func (a *admission) inFlight() (requests int, bytes int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests, a.bytes
}

// Ticket is an admitted request: it holds its slot and the bytes granted
// to its body until Release.
type Ticket struct {
	admission *admission
	account   string
	share     *accountShare
	bytes     int64
	// management: the ticket holds a slot of the account's management
	// share, not an ingest slot.
	management bool
}

// grow grants n more bytes to the request's body, or says why not.
func (t *Ticket) grow(n int64) refusal {
	a := t.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.reserve(t.share, n); r != admitted {
		return r
	}
	t.bytes += n
	return admitted
}

// Release gives back the request's slot and bytes. Call it once, when
// the request is answered.
func (t *Ticket) Release() {
	a := t.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.management {
		t.share.management--
	} else {
		a.requests--
		t.share.requests--
	}
	a.bytes -= t.bytes
	t.share.bytes -= t.bytes
	if t.share.requests == 0 && t.share.management == 0 {
		delete(a.accounts, t.account)
	}
}
