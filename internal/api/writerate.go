package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/apiconv"
	"golang.org/x/time/rate"
)

// Defaults of Config.AccountWriteRate and Config.AccountWriteBurst: an
// account may make 50 changes at once, and then 5 a second. A person or a
// script configuring sluice never comes near; a tenant looping on creates
// and deletes to hold the process's CPU (each change is a few JetStream
// writes, a listing for its account's limits, and for a subscription a
// consumer per route) is slowed to a rate the process serves beside every
// other account.
const (
	DefaultAccountWriteRate  = 5
	DefaultAccountWriteBurst = 50
)

// writeRate bounds how fast each account changes its configuration: every
// management call that writes (POST, PATCH, PUT, DELETE, ingest aside,
// which has its own front door) takes a token from its account's bucket,
// and a call that finds it empty is refused with 429 and the wait in
// Retry-After. Buckets are kept for accounts that used theirs lately:
// one whose bucket has filled again is forgotten, as it is then the same
// as a new one.
type writeRate struct {
	limit rate.Limit
	burst int

	mu        sync.Mutex
	accounts  map[string]*rate.Limiter
	lastSweep time.Time
}

// writeRateSweep is how often buckets that filled again are forgotten.
const writeRateSweep = time.Minute

// newWriteRate returns the buckets of perSecond changes a second, burst at
// once; perSecond < 0 leaves changes unbounded (nil).
func newWriteRate(perSecond float64, burst int) *writeRate {
	if perSecond < 0 {
		return nil
	}
	return &writeRate{limit: rate.Limit(perSecond), burst: burst, accounts: map[string]*rate.Limiter{}}
}

// take takes a token of the account's at now, or returns how long until
// one is there.
func (w *writeRate) take(account string, now time.Time) (ok bool, wait time.Duration) {
	if w == nil {
		return true, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sweep(now)
	l := w.accounts[account]
	if l == nil {
		l = rate.NewLimiter(w.limit, w.burst)
		w.accounts[account] = l
	}
	if l.AllowN(now, 1) {
		return true, 0
	}
	r := l.ReserveN(now, 1)
	wait = r.DelayFrom(now)
	r.CancelAt(now)
	if !r.OK() || wait == rate.InfDuration {
		wait = time.Hour
	}
	return false, wait
}

// sweep forgets the buckets that filled again, at most once a
// writeRateSweep. w.mu is held.
func (w *writeRate) sweep(now time.Time) {
	if now.Sub(w.lastSweep) < writeRateSweep {
		return
	}
	w.lastSweep = now
	for account, l := range w.accounts {
		if l.TokensAt(now) >= float64(w.burst) {
			delete(w.accounts, account)
		}
	}
}

// changes reports whether r is a management call that writes (POST
// /events does not come through authenticated: ingest has its own door).
func changes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// limitWrites refuses a change of the key's account past its rate, with
// 429 and Retry-After, before next reads its body.
func (s *Server) limitWrites(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !changes(r) {
			next.ServeHTTP(w, r)
			return
		}
		ok, wait := s.writeRate.take(apiconv.RequestKey(r.Context()).AccountID, time.Now())
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		s.door.CountWriteRateRefusal()
		seconds := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
		apiconv.WriteError(w, r, s.writeRateError(seconds))
	})
}

// writeRateError is the 429 of a change past its account's rate.
func (s *Server) writeRateError(seconds int) *apiconv.Error {
	return apiconv.NewError(apiconv.CodeAccountWriteRate, "the account is changing its configuration faster than sluice allows one account (%g changes a second after a burst of %d; serve --account-write-rate and --account-write-burst): wait %d s (Retry-After) and send it again, or make fewer changes at once", float64(s.writeRate.limit), s.writeRate.burst, seconds)
}
