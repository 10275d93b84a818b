package store_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestKeyCache: a key looked up once is answered from memory while the
// cache watches the keys, and a change or a delete of the key made by
// another process is seen by the next lookups; stopped, the cache answers
// from the store alone.
func TestKeyCache(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	const token = "sk_key_cache_test_token_0123456789"
	key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{Description: "first"}, token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, ""); err != nil { // so that key can be deleted
		t.Fatal(err)
	}
	cache := e.store.NewKeyCache()
	if cache.Live() {
		t.Fatal("live before Run")
	}
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		cache.Run(ctx, slog.New(slog.DiscardHandler))
	}()
	check.Eventually(t, 5*time.Second, "the cache watching", func() (bool, bool) { return cache.Live(), cache.Live() })

	if got, err := cache.Authenticate(e.ctx, token); err != nil || got.ID != key.ID || got.Description != "first" {
		t.Fatalf("Authenticate: %+v, %v", got, err)
	}
	// The token's index now names another key: the store alone would
	// refuse the token, the cache answers from memory.
	index := "api_key_hashes." + sha256Hex(token)
	saved, err := e.kv.Get(e.ctx, index)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.kv.Put(e.ctx, index, []byte(`{"account_id":"`+account.ID+`","api_key_id":"ak_none"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Authenticate(e.ctx, token); !errors.Is(err, store.ErrUnauthenticated) {
		t.Fatalf("the store, with the index changed: %v, want ErrUnauthenticated", err)
	}
	if got, err := cache.Authenticate(e.ctx, token); err != nil || got.ID != key.ID {
		t.Fatalf("the cache, with the index changed: %+v, %v; want the key from memory", got, err)
	}
	if _, err := e.kv.Put(e.ctx, index, saved.Value()); err != nil {
		t.Fatal(err)
	}

	// Another process changes the key, then deletes it.
	other := e.openAnother(t)
	if _, err := other.UpdateAPIKey(e.ctx, account.ID, key.ID, func(k *store.APIKey) error {
		k.Description = "second"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 5*time.Second, "the changed description", func() (string, bool) {
		got, err := cache.Authenticate(e.ctx, token)
		return got.Description, err == nil && got.Description == "second"
	})
	if _, err := other.DeleteAPIKey(e.ctx, account.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	check.Eventually(t, 5*time.Second, "the deleted key refused", func() (error, bool) {
		_, err := cache.Authenticate(e.ctx, token)
		return err, errors.Is(err, store.ErrUnauthenticated)
	})
	if _, err := cache.Authenticate(e.ctx, "sk_no_such_token"); !errors.Is(err, store.ErrUnauthenticated) {
		t.Fatalf("an unknown token: %v", err)
	}

	stop()
	<-done
	if cache.Live() {
		t.Fatal("live after Run returned")
	}
}
