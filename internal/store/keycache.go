package store

import (
	"context"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// MaxCachedKeys bounds the API keys a KeyCache holds; past it, it starts
// again empty.
const MaxCachedKeys = 100_000

// KeyCache authenticates API keys as Store.Authenticate does, answering
// from memory the tokens it has looked up before, for as long as it
// watches the keys' records: every write or delete of a key's record, by
// any process, drops what it holds of that key before the next request
// can be answered from it, and while it does not watch (before its watch
// has started, after the watch ended) it answers from the store alone.
//
// A management request of an account makes two reads of the store for its
// key before its own, and each waits its turn in a process whose CPUs are
// busy delivering another account's events; answered from memory, it
// waits for one.
//
// Run it with Run; it is safe for concurrent use.
type KeyCache struct {
	s *Store

	mu   sync.Mutex
	live bool
	// generation counts the drops: a key read from the store is kept only
	// if no drop came while it was being read, so that a read that began
	// before a key was deleted cannot keep it.
	generation uint64
	byHash     map[string]APIKey // by token hash
	byRecord   map[string]string // token hashes by the key of their key's record
}

// NewKeyCache returns a cache of the store's API keys, answering from the
// store alone until Run has started watching them.
func (s *Store) NewKeyCache() *KeyCache {
	return &KeyCache{s: s, byHash: make(map[string]APIKey), byRecord: make(map[string]string)}
}

// Authenticate returns the API key whose token this is, as
// Store.Authenticate does.
func (c *KeyCache) Authenticate(ctx context.Context, token string) (APIKey, error) {
	if token == "" || len(token) > MaxTokenLength {
		return APIKey{}, ErrUnauthenticated
	}
	tokenHash := hashToken(token)
	c.mu.Lock()
	key, ok := c.byHash[tokenHash]
	live, generation := c.live, c.generation
	c.mu.Unlock()
	if ok {
		return key, nil
	}
	key, err := c.s.authenticateHash(ctx, tokenHash)
	if err != nil || !live {
		return key, err
	}
	c.mu.Lock()
	if c.live && c.generation == generation {
		if len(c.byHash) >= MaxCachedKeys {
			clear(c.byHash)
			clear(c.byRecord)
		}
		c.byHash[tokenHash] = key
		c.byRecord[apiKeys.key(key.AccountID, key.ID)] = tokenHash
	}
	c.mu.Unlock()
	return key, nil
}

// Run watches the API keys' records until ctx ends, watching again when a
// watch ends (the cache answers from the store meanwhile). With
// UpdatesOnly, a watch's consumer exists once it has started, and every
// write from then on comes through: the cache answers from memory from
// then on.
func (c *KeyCache) Run(ctx context.Context, log *slog.Logger) {
	c.s.followKeys(ctx, log, "API keys for the key cache (keys are checked in the store meanwhile)", []string{allAPIKeys},
		[]jetstream.WatchOpt{jetstream.UpdatesOnly(), jetstream.MetaOnly()}, keyFollower{
			started: func() { c.setLive(true) },
			entry: func(entry jetstream.KeyValueEntry) {
				if entry != nil { // none with UpdatesOnly
					c.drop(entry.Key())
				}
			},
			ended: func() { c.setLive(false) },
		})
}

// setLive starts or stops answering from memory; either way, it starts
// again empty.
func (c *KeyCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = live
	c.generation++
	clear(c.byHash)
	clear(c.byRecord)
}

// drop forgets the key whose record is at recordKey.
func (c *KeyCache) drop(recordKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	if hash, ok := c.byRecord[recordKey]; ok {
		delete(c.byHash, hash)
		delete(c.byRecord, recordKey)
	}
}
