package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
)

// TestAuthenticateCredential finds a credential by its token, refuses an
// unknown token and a deleted credential's, whose index goes with it, and
// keeps two accounts' credentials apart.
func TestAuthenticateCredential(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	c, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{Description: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.store.CreateCredential(e.ctx, other.ID, store.Credential{Description: "other"})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, token string
		want        store.Credential
	}{
		{"found", c.Token, c},
		{"other account's", o.Token, o},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.store.AuthenticateCredential(e.ctx, tc.token)
			if err != nil || got.ID != tc.want.ID || got.AccountID != tc.want.AccountID || got.Token != "" || got.Description != tc.want.Description {
				t.Fatalf("AuthenticateCredential = %+v, %v; want %s of %s without its token", got, err, tc.want.ID, tc.want.AccountID)
			}
		})
	}
	for name, token := range map[string]string{
		"unknown":    store.CredentialTokenPrefix + strings.Repeat("x", 43),
		"empty":      "",
		"too long":   strings.Repeat("x", store.MaxTokenLength+1),
		"api key's":  "sk_" + strings.TrimPrefix(c.Token, store.CredentialTokenPrefix),
		"hash given": c.TokenHash,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := e.store.AuthenticateCredential(e.ctx, token); !errors.Is(err, store.ErrUnauthenticated) {
				t.Fatalf("AuthenticateCredential = %v, want ErrUnauthenticated", err)
			}
		})
	}

	if _, err := e.store.DeleteCredential(e.ctx, account.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.AuthenticateCredential(e.ctx, c.Token); !errors.Is(err, store.ErrUnauthenticated) {
		t.Fatalf("AuthenticateCredential of a deleted credential = %v, want ErrUnauthenticated", err)
	}
	for key := range e.rawEntries(t) {
		if key == "credential_hashes."+c.TokenHash {
			t.Fatalf("the index %s outlived its credential", key)
		}
	}
	if _, err := e.store.AuthenticateCredential(e.ctx, o.Token); err != nil {
		t.Fatalf("the other account's credential after the delete: %v", err)
	}
}

// TestIndexCredentialTokens indexes the tokens of credentials made before
// the index: the first unknown token AuthenticateCredential sees makes it
// index them, once; a later run indexes only what has no index.
func TestIndexCredentialTokens(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	old, err := e.store.CreateUnindexedCredential(e.ctx, account.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{}); err != nil {
		t.Fatal(err)
	}
	if got, err := e.store.AuthenticateCredential(e.ctx, old.Token); err != nil || got.ID != old.ID {
		t.Fatalf("AuthenticateCredential of an older credential = %+v, %v; want it found", got, err)
	}
	if _, err := e.store.CreateUnindexedCredential(e.ctx, account.ID); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		if n, err := e.store.IndexCredentialTokens(e.ctx); err != nil || n != want {
			t.Fatalf("IndexCredentialTokens run %d = %d, %v; want %d", i+1, n, err, want)
		}
	}
}
