package filters

import (
	"container/list"
	"sync"
)

// Cache keeps the compiled programs of the filters in use, so each filter is
// compiled once per process however many routes and reconciliations use it.
// It is safe for concurrent use.
//
// Programs are keyed by event kind and expression. The kind's name carries
// its version ("http_request_complete.v0"), and a Cache belongs to one Env,
// built from one catalogue: a new catalogue means a new Env and a new Cache,
// so a cached program never outlives the declarations it was checked against.
//
// The cache holds at most size programs and drops the least recently used
// beyond that. Errors are not cached: a filter is checked when it is written,
// so one that fails here is rare and worth retrying; concurrent callers
// asking for the same filter while it compiles wait and share the outcome.
type Cache struct {
	env  *Env
	size int

	mu      sync.Mutex
	entries map[cacheKey]*list.Element // values are *cacheEntry
	recent  *list.List                 // most recently used first
}

type cacheKey struct {
	kind, expr string
}

type cacheEntry struct {
	key     cacheKey
	done    chan struct{} // closed when program and err are set
	program *Program
	err     error
}

// NewCache returns an empty cache of at most size programs compiled by env.
// A size below 1 is taken as 1.
func NewCache(env *Env, size int) *Cache {
	return &Cache{
		env:     env,
		size:    max(size, 1),
		entries: map[cacheKey]*list.Element{},
		recent:  list.New(),
	}
}

// Program returns the compiled program of the filter expr for events of the
// kind, compiling it on first use. It returns the errors of Env.Compile:
// ErrUnknownKind, ErrNotTraffic or a *CompileError.
func (c *Cache) Program(kind, expr string) (*Program, error) {
	key := cacheKey{kind: kind, expr: expr}
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.recent.MoveToFront(el)
		c.mu.Unlock()
		entry := el.Value.(*cacheEntry)
		<-entry.done
		return entry.program, entry.err
	}
	entry := &cacheEntry{key: key, done: make(chan struct{})}
	c.entries[key] = c.recent.PushFront(entry)
	for c.recent.Len() > c.size {
		oldest := c.recent.Back()
		c.recent.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
	}
	c.mu.Unlock()

	entry.program, entry.err = c.env.Compile(kind, expr)
	close(entry.done)
	if entry.err != nil {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok && el.Value == entry {
			c.recent.Remove(el)
			delete(c.entries, key)
		}
		c.mu.Unlock()
	}
	return entry.program, entry.err
}

// Len returns the number of programs in the cache.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.recent.Len()
}
