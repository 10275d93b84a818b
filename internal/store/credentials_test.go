package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestCredentialLifecycle creates, reads, lists, updates and deletes a
// credential: its token returned once, stored only as its hash; another
// account's id is not found.
func TestCredentialLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	bot, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}

	c, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{ID: "cr_ignored", AccountID: other.ID,
		Description: "edge 1", Metadata: "{}", ACL: []string{"bind:*.example.com"}, OwnerID: bot.ID, TokenHash: "chosen", Token: "chosen"})
	if err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
	if schemas.CheckID(schemas.PrefixCredential, c.ID) != nil || c.AccountID != account.ID || c.Description != "edge 1" ||
		c.OwnerID != bot.ID || len(c.ACL) != 1 || !strings.HasPrefix(c.Token, store.CredentialTokenPrefix) || c.TokenHash == "chosen" {
		t.Fatalf("created %+v; want a cr_ id of the account, the fields, a new token", c)
	}
	for key, value := range e.rawEntries(t) {
		if strings.Contains(value, c.Token) || strings.Contains(key, c.Token) {
			t.Fatalf("the token is stored in %s", key)
		}
	}
	got, err := e.store.GetCredential(e.ctx, account.ID, c.ID)
	if err != nil || got.Token != "" || got.TokenHash != c.TokenHash || got.OwnerID != bot.ID {
		t.Fatalf("GetCredential = %+v, %v; want it without its token", got, err)
	}
	if logged := c.LogValue().String(); strings.Contains(logged, c.Token) || strings.Contains(logged, c.TokenHash) {
		t.Fatalf("LogValue shows the token or its hash: %s", logged)
	}

	updated, err := e.store.UpdateCredential(e.ctx, account.ID, c.ID, func(v *store.Credential) error {
		v.ACL, v.OwnerID, v.Description, v.ID = nil, "", "edge 2", "cr_other"
		return nil
	})
	if err != nil || updated.ACL != nil || updated.OwnerID != "" || updated.Description != "edge 2" || updated.ID != c.ID || updated.Token != "" {
		t.Fatalf("UpdateCredential = %+v, %v", updated, err)
	}
	if _, err := e.store.UpdateCredential(e.ctx, account.ID, c.ID, func(v *store.Credential) error { v.TokenHash = "x"; return nil }); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("changing the token hash: %v, want ErrInvalid", err)
	}

	for name, err := range map[string]error{
		"GetCredential":    errOf(e.store.GetCredential(e.ctx, other.ID, c.ID)),
		"UpdateCredential": errOf(e.store.UpdateCredential(e.ctx, other.ID, c.ID, func(*store.Credential) error { return nil })),
		"DeleteCredential": errOf(e.store.DeleteCredential(e.ctx, other.ID, c.ID)),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of another account: %v, want ErrNotFound", name, err)
		}
	}
	if _, err := e.store.DeleteCredential(e.ctx, account.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, errOf(e.store.GetCredential(e.ctx, account.ID, c.ID)), store.ErrNotFound)
}

// TestCredentialRules refuses a bad acl quoting its rule, an owner that is
// not a bot user of the account, and text over its limit.
func TestCredentialRules(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other")
	foreign, err := e.store.CreateBotUser(e.ctx, other.ID, store.BotUser{Name: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in    store.Credential
		field string
		says  string
	}{
		{store.Credential{ACL: []string{"*", "connect:x"}}, "acl[1]", `"connect:x"`},
		{store.Credential{ACL: []string{"bind:example.com:99999"}}, "acl[0]", "bind:<host>:<port>"},
		{store.Credential{ACL: make([]string, store.MaxACLRules+1)}, "acl", "more than"},
		{store.Credential{OwnerID: "ac_x"}, "owner_id", "bot user"},
		{store.Credential{OwnerID: foreign.ID}, "owner_id", "no bot user of the account"},
		{store.Credential{OwnerID: "bot_2Ed2q8zQnGAqCS4LCCXyqqmNuQK"}, "owner_id", "no bot user"},
		{store.Credential{Description: strings.Repeat("x", 256)}, "description", "255 bytes"},
		{store.Credential{Metadata: strings.Repeat("x", 4097)}, "metadata", "4096 bytes"},
	} {
		_, err := e.store.CreateCredential(e.ctx, account.ID, tc.in)
		var invalid *store.ValidationError
		if !errors.As(err, &invalid) || invalid.Field != tc.field || !strings.Contains(invalid.Msg, tc.says) {
			t.Errorf("CreateCredential(%+v) = %v; want a *ValidationError of %s saying %q", tc.in, err, tc.field, tc.says)
		}
	}
	if _, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{ACL: []string{"*", "bind:a.example.com", "bind:*.example.com", "bind:10.0.0.1:22"}}); err != nil {
		t.Fatalf("a valid acl: %v", err)
	}
}

// TestCredentialOwnerInUse refuses to delete a bot user that owns
// credentials, naming them, and deletes it once it owns none.
func TestCredentialOwnerInUse(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	bot, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{OwnerID: bot.ID})
	if err != nil {
		t.Fatal(err)
	}
	err = errOf(e.store.DeleteBotUser(e.ctx, account.ID, bot.ID))
	var inUse *store.OwnerInUseError
	if !errors.As(err, &inUse) || !errors.Is(err, store.ErrConflict) || len(inUse.Credentials) != 1 || inUse.Credentials[0] != c.ID || !strings.Contains(err.Error(), c.ID) {
		t.Fatalf("deleting an owner: %v, want an *OwnerInUseError naming %s", err, c.ID)
	}
	if _, err := e.store.UpdateCredential(e.ctx, account.ID, c.ID, func(v *store.Credential) error { v.OwnerID = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteBotUser(e.ctx, account.ID, bot.ID); err != nil {
		t.Fatalf("deleting a bot user owning nothing: %v", err)
	}
	_, err = e.store.UpdateCredential(e.ctx, account.ID, c.ID, func(v *store.Credential) error { v.OwnerID = bot.ID; return nil })
	var invalid *store.ValidationError
	if !errors.As(err, &invalid) || invalid.Field != "owner_id" {
		t.Fatalf("a deleted owner: %v, want a *ValidationError of owner_id", err)
	}
}

// TestCredentialOwnerRace deletes a bot user while credentials are given
// it as their owner: no credential ends up owned by a deleted bot user.
func TestCredentialOwnerRace(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	for range 5 {
		bot, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "agent"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var created store.Credential
		var createErr, deleteErr error
		wg.Go(func() {
			created, createErr = e.store.CreateCredential(e.ctx, account.ID, store.Credential{OwnerID: bot.ID})
		})
		wg.Go(func() { _, deleteErr = e.store.DeleteBotUser(e.ctx, account.ID, bot.ID) })
		wg.Wait()
		if (createErr == nil) == (deleteErr == nil) {
			t.Fatalf("create %v, delete %v: want exactly one to succeed", createErr, deleteErr)
		}
		if createErr == nil {
			if _, err := e.store.DeleteCredential(e.ctx, account.ID, created.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.DeleteBotUser(e.ctx, account.ID, bot.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCredentialPagesAndLimit lists credentials newest first, and refuses
// one over Limits.Credentials.
func TestCredentialPagesAndLimit(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{Credentials: 3}})
	account := e.createAccount(t, "team")
	var made []string
	for range 3 {
		c, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, c.ID)
	}
	var limit *store.LimitError
	if err := errOf(e.store.CreateCredential(e.ctx, account.ID, store.Credential{})); !errors.As(err, &limit) || limit.Limit != store.LimitCredentials || limit.Max != 3 {
		t.Fatalf("over the limit: %v", err)
	}
	items, next, err := e.store.ListCredentials(e.ctx, account.ID, store.Page{Limit: 2})
	if err != nil || len(items) != 2 || items[0].ID != made[2] || items[0].Token != "" || next == "" {
		t.Fatalf("ListCredentials = %+v, %q, %v", items, next, err)
	}
	if store.DefaultMaxCredentials != 100 {
		t.Fatalf("DefaultMaxCredentials = %d, want 100", store.DefaultMaxCredentials)
	}
}

// TestCredentialConcurrentUpdates updates one credential from two
// processes at once, each appending a rule: no update is lost.
func TestCredentialConcurrentUpdates(t *testing.T) {
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "team")
	c, err := e.store.CreateCredential(e.ctx, account.ID, store.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = stores[i%2].UpdateCredential(e.ctx, account.ID, c.ID, func(v *store.Credential) error {
				v.ACL = append(v.ACL, fmt.Sprintf("bind:h%d.example.com", i))
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	got, err := e.store.GetCredential(e.ctx, account.ID, c.ID)
	if err != nil || len(got.ACL) != n {
		t.Fatalf("after %d concurrent updates: %v, %v; want %d rules", n, got.ACL, err, n)
	}
}
