package edge

import (
	"sync"
	"time"
)

// How an edge knows a user's application session should end, at the next
// request, when it is revoked (DELETE /app/sessions/{id}), evicted by a
// newer login, or ended: the store's watch of the sessions' ends
// (WatchAppSessionEnds) reaches every edge process within milliseconds,
// and each calls AppSessionEnded. A session this edge has not seen is
// read from the store once; after that, the requests of its user cost no
// store read, and its last_active is written at most once a minute. A
// store read per request would have cost each request a round trip to
// NATS, and a cache of reads without the watch would have let a revoked
// user in until the cache expired.

// maxSessionEntries bounds the sessions an edge keeps of each kind, live
// and ended; past it, it forgets them and reads the store again.
const maxSessionEntries = 100_000

// sessionState is what an edge knows of a session.
type sessionState int

const (
	sessionUnknown sessionState = iota // read the store
	sessionLive                        // it goes on
	sessionRefresh                     // it goes on, and its last_active is due: this request writes it
	sessionEnded                       // log the user out
)

// sessionCache is what an edge knows of application sessions, by account
// and id.
type sessionCache struct {
	mu    sync.Mutex
	live  map[string]*liveSession
	ended map[string]struct{}
}

// liveSession is a session that went on when last seen.
type liveSession struct {
	expires   time.Time // when it ends unless refreshed
	refreshed time.Time // when its last_active was last written
}

func newSessionCache() sessionCache {
	return sessionCache{live: map[string]*liveSession{}, ended: map[string]struct{}{}}
}

// check returns what the edge knows of the session key at now. When its
// refresh is due, it returns sessionRefresh to one request, which writes
// it, and sessionLive to those meanwhile.
func (c *sessionCache) check(key string, now time.Time) sessionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ended[key]; ok {
		return sessionEnded
	}
	s, ok := c.live[key]
	switch {
	case !ok:
		return sessionUnknown
	case !now.Before(s.expires):
		// Idle past its end, unless another edge refreshed it: the store
		// tells.
		delete(c.live, key)
		return sessionUnknown
	case now.Sub(s.refreshed) >= refreshEvery:
		s.refreshed = now
		return sessionRefresh
	}
	return sessionLive
}

// put records a session read from the store or just recorded, and
// returns what check would: sessionEnded if it ended meanwhile.
func (c *sessionCache) put(key string, expires, lastActive, now time.Time) sessionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ended[key]; ok {
		return sessionEnded
	}
	if len(c.live) >= maxSessionEntries {
		clear(c.live)
	}
	s := &liveSession{expires: expires, refreshed: lastActive}
	c.live[key] = s
	if now.Sub(lastActive) >= refreshEvery {
		s.refreshed = now
		return sessionRefresh
	}
	return sessionLive
}

// extend records a session's new end after a refresh.
func (c *sessionCache) extend(key string, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.live[key]; ok {
		s.expires = expires
	}
}

// end records that a session ended. Session ids are never reused: it
// stays ended.
func (c *sessionCache) end(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.live, key)
	if len(c.ended) >= maxSessionEntries {
		clear(c.ended)
	}
	c.ended[key] = struct{}{}
}

// forget drops what is known of live sessions: each is read from the
// store again at its next request.
func (c *sessionCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.live)
}

// AppSessionEnded tells the edge that the account's application session
// id ended (the store's WatchAppSessionEnds): the next request of its
// user is sent to log in again.
func (e *Edge) AppSessionEnded(accountID, id string) {
	if e.logins != nil {
		e.logins.cache.end(accountID + "/" + id)
	}
}

// ForgetAppSessions makes the edge read every application session from
// the store again at its next request: call it when the watch of their
// ends starts again, as ends between two watches are not reported.
func (e *Edge) ForgetAppSessions() {
	if e.logins != nil {
		e.logins.cache.forget()
	}
}
