package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// cacheTTL is the key cache TTL of the tests of the cache.
const cacheTTL = 2 * time.Second

// TestAuthenticateCachesKeys authenticates a key, then takes the bucket's
// server away: the key still authenticates, from the cache, and a token
// never verified does not; once the clock passes the TTL the key is read
// again, and fails with the server.
func TestAuthenticateCachesKeys(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{KeyCacheTTL: cacheTTL})
	account := e.createAccount(t, "acme")
	key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	other, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	if _, err := e.store.Authenticate(e.ctx, key.Token); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	e.srv.Shutdown()
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	clock.advance(cacheTTL - time.Millisecond)
	if got, err := e.store.Authenticate(ctx, key.Token); err != nil || got.ID != key.ID {
		t.Fatalf("Authenticate of a key verified within the TTL, with the server down = %s, %v; want the key, from the cache", got.ID, err)
	}
	if _, err := e.store.Authenticate(ctx, other.Token); err == nil {
		t.Fatalf("Authenticate of a key never verified, with the server down: no error")
	}
	clock.advance(time.Millisecond)
	if _, err := e.store.Authenticate(ctx, key.Token); err == nil {
		t.Fatalf("Authenticate past the TTL, with the server down: no error, want the key read again")
	}
}

// TestDeletedKeyStopsWorking deletes a key cached in two processes: it
// stops working at once in the one that deleted it, and once the TTL has
// passed in the other.
func TestDeletedKeyStopsWorking(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{KeyCacheTTL: cacheTTL})
	e.cfg.Clock = clock.now
	other := e.openAnother(t) // on the same clock
	account := e.createAccount(t, "acme")
	if _, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, ""); err != nil {
		t.Fatalf("CreateAPIKey: %v", err) // the account keeps a key
	}
	key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	for _, s := range []*store.Store{e.store, other} {
		if _, err := s.Authenticate(e.ctx, key.Token); err != nil {
			t.Fatalf("Authenticate: %v", err)
		}
	}
	if _, err := e.store.DeleteAPIKey(e.ctx, account.ID, key.ID); err != nil {
		t.Fatalf("DeleteAPIKey: %v", err)
	}
	if _, err := e.store.Authenticate(e.ctx, key.Token); !errors.Is(err, store.ErrUnauthenticated) {
		t.Fatalf("Authenticate in the process that deleted the key = %v, want ErrUnauthenticated at once", err)
	}
	if _, err := other.Authenticate(e.ctx, key.Token); err != nil {
		t.Fatalf("Authenticate in the other process within the TTL = %v, want the key still cached", err)
	}
	clock.advance(cacheTTL)
	if _, err := other.Authenticate(e.ctx, key.Token); !errors.Is(err, store.ErrUnauthenticated) {
		t.Fatalf("Authenticate in the other process past the TTL = %v, want ErrUnauthenticated", err)
	}
}

// TestUpdatedKeyIsReadAgain updates a cached key's description: the
// process that updated it authenticates it as it is now.
func TestUpdatedKeyIsReadAgain(t *testing.T) {
	e := newEnvWith(t, store.Config{KeyCacheTTL: time.Hour})
	account := e.createAccount(t, "acme")
	key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{Description: "before"}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	if _, err := e.store.Authenticate(e.ctx, key.Token); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if _, err := e.store.UpdateAPIKey(e.ctx, account.ID, key.ID, func(k *store.APIKey) error { k.Description = "after"; return nil }); err != nil {
		t.Fatalf("UpdateAPIKey: %v", err)
	}
	got, err := e.store.Authenticate(e.ctx, key.Token)
	if err != nil || got.Description != "after" {
		t.Fatalf("Authenticate after the update = %q, %v; want the description after", got.Description, err)
	}
}
