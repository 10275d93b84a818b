package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// env is a store on a fresh server, with the raw bucket for inspection.
type env struct {
	ctx   context.Context
	srv   *natsserver.Server
	store *store.Store
	kv    jetstream.KeyValue
	cfg   store.Config // what store was opened with
}

func newEnv(t *testing.T) env {
	t.Helper()
	return newEnvWith(t, store.Config{})
}

// newEnvWith is newEnv with the store opened with cfg.
func newEnvWith(t *testing.T, cfg store.Config) env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	srv := natstest.Start(t)
	_, js := natstest.Connect(t, srv)
	s, err := store.Open(ctx, js, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	kv, err := js.KeyValue(ctx, store.Bucket)
	if err != nil {
		t.Fatalf("KeyValue(%s): %v", store.Bucket, err)
	}
	return env{ctx: ctx, srv: srv, store: s, kv: kv, cfg: cfg}
}

// openAnother opens the store of e on a connection of its own, as another
// process would.
func (e env) openAnother(t *testing.T) *store.Store {
	t.Helper()
	_, js := natstest.Connect(t, e.srv)
	s, err := store.Open(e.ctx, js, e.cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func (e env) createAccount(t *testing.T, name string) store.Account {
	t.Helper()
	account, err := e.store.CreateAccount(e.ctx, name)
	if err != nil {
		t.Fatalf("CreateAccount(%q): %v", name, err)
	}
	return account
}

// rawEntries returns every current key and value of the bucket.
func (e env) rawEntries(t *testing.T) map[string]string {
	t.Helper()
	lister, err := e.kv.ListKeys(e.ctx)
	if err != nil {
		t.Fatalf("ListKeys: %v", err)
	}
	entries := make(map[string]string)
	for key := range lister.Keys() {
		entry, err := e.kv.Get(e.ctx, key)
		if err != nil {
			t.Fatalf("Get(%s): %v", key, err)
		}
		entries[key] = string(entry.Value())
	}
	return entries
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("error = %v, want %v", err, want)
	}
}

func TestOpenTwice(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "kept")
	again := e.openAnother(t)
	got, err := again.GetAccount(e.ctx, account.ID)
	if err != nil {
		t.Fatalf("GetAccount after reopening: %v", err)
	}
	if got != account {
		t.Fatalf("GetAccount = %+v, want %+v", got, account)
	}
	status, err := e.kv.Status(e.ctx)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if status.History() != 1 {
		t.Fatalf("bucket history = %d, want 1", status.History())
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     store.Config
		wantErr string
	}{
		{name: "defaults", cfg: store.Config{}},
		{name: "three replicas", cfg: store.Config{Replicas: 3}},
		{name: "too many replicas", cfg: store.Config{Replicas: 6}, wantErr: "replicas"},
		{name: "negative replicas", cfg: store.Config{Replicas: -1}, wantErr: "replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check.ErrorContains(t, tt.cfg.Validate(), tt.wantErr)
		})
	}
}

// errOf returns the error of a call that also returns a value.
func errOf[T any](_ T, err error) error { return err }
