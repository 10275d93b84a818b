package store

import (
	"sync"
	"time"
)

// DefaultKeyCacheTTL is the default of Config.KeyCacheTTL: how long a
// process goes on taking a key another process deleted.
const DefaultKeyCacheTTL = 2 * time.Second

// maxCachedKeys bounds the keys a keyCache holds: past it, expired keys
// are dropped, and while it stays full new keys are looked up each time
// rather than cached.
const maxCachedKeys = 10_000

// keyCache holds the API keys Authenticate verified, by token hash, each
// for a TTL from its lookup, so that a request's key check costs no store
// read while its key is cached: one account's requests, however many,
// then put no key lookup of another account's in a queue behind theirs.
// Only keys found are cached: an unknown token is looked up every time,
// so that a key created elsewhere works at once. DeleteAPIKey and
// UpdateAPIKey forget the key in the process that calls them; in others
// it lasts until its TTL ends.
type keyCache struct {
	ttl time.Duration // 0: no cache
	now func() time.Time

	mu   sync.Mutex
	keys map[string]cachedKey
	// forgotten counts the calls of forget, so that a lookup that began
	// before one does not cache what it read.
	forgotten uint64
}

// lookup is a lookup of a key in the store, begun at start.
type lookup struct {
	start     time.Time
	forgotten uint64
}

// cachedKey is a verified key and when it must be looked up again.
type cachedKey struct {
	key     APIKey
	expires time.Time
}

func newKeyCache(ttl time.Duration, now func() time.Time) *keyCache {
	return &keyCache{ttl: max(ttl, 0), now: now, keys: make(map[string]cachedKey)}
}

// get returns the key of the token hash if it is cached and fresh.
func (c *keyCache) get(tokenHash string) (APIKey, bool) {
	if c.ttl == 0 {
		return APIKey{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[tokenHash]
	if !ok || !c.now().Before(k.expires) {
		return APIKey{}, false
	}
	return k.key, true
}

// begin starts a lookup of a key in the store.
func (c *keyCache) begin() lookup {
	c.mu.Lock()
	defer c.mu.Unlock()
	return lookup{start: c.now(), forgotten: c.forgotten}
}

// put caches the key the lookup found. Its TTL counts from the lookup's
// start, so that it never outlives a deletion elsewhere that the lookup
// missed by more than the TTL; and a key forgotten here during the
// lookup is not cached.
func (c *keyCache) put(tokenHash string, key APIKey, l lookup) {
	if c.ttl == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgotten != l.forgotten {
		return
	}
	if len(c.keys) >= maxCachedKeys {
		now := c.now()
		for h, k := range c.keys {
			if !now.Before(k.expires) {
				delete(c.keys, h)
			}
		}
		if len(c.keys) >= maxCachedKeys {
			return
		}
	}
	c.keys[tokenHash] = cachedKey{key: key, expires: l.start.Add(c.ttl)}
}

// forget drops the key with the id, at once.
func (c *keyCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgotten++
	for h, k := range c.keys {
		if k.key.ID == id {
			delete(c.keys, h)
		}
	}
}
