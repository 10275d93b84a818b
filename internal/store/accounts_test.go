package store_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

func TestCreateAccount(t *testing.T) {
	tests := []struct {
		name        string
		accountName string
		wantErr     error
	}{
		{name: "plain", accountName: "acme"},
		{name: "longest name", accountName: strings.Repeat("a", 255)},
		{name: "empty name", accountName: "", wantErr: store.ErrInvalid},
		{name: "name too long", accountName: strings.Repeat("a", 256), wantErr: store.ErrInvalid},
		{name: "name not utf-8", accountName: "\xff", wantErr: store.ErrInvalid},
	}
	e := newEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			account, err := e.store.CreateAccount(e.ctx, tt.accountName)
			wantErr(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if err := schemas.CheckID(schemas.PrefixAccount, account.ID); err != nil {
				t.Fatalf("account id: %v", err)
			}
			if account.Name != tt.accountName || account.CreatedAt.IsZero() {
				t.Fatalf("account = %+v", account)
			}
			got, err := e.store.GetAccount(e.ctx, account.ID)
			if err != nil {
				t.Fatalf("GetAccount: %v", err)
			}
			if got != account {
				t.Fatalf("GetAccount = %+v, want %+v", got, account)
			}
		})
	}
}

func TestGetAccountNotFound(t *testing.T) {
	tests := []struct {
		name string
		id   string
	}{
		{name: "unknown id", id: schemas.NewID(schemas.PrefixAccount)},
		{name: "api key id", id: schemas.NewID(schemas.PrefixAPIKey)},
		{name: "wildcard", id: "ac_*"},
		{name: "empty", id: ""},
	}
	e := newEnv(t)
	e.createAccount(t, "other")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.store.GetAccount(e.ctx, tt.id)
			wantErr(t, err, store.ErrNotFound)
		})
	}
}

func TestListAccountsNewestFirst(t *testing.T) {
	e := newEnv(t)
	got, err := e.store.ListAccounts(e.ctx)
	if err != nil {
		t.Fatalf("ListAccounts on an empty store: %v", err)
	}
	if len(got) != 0 {
		t.Fatalf("ListAccounts on an empty store = %+v", got)
	}

	created := make(map[string]store.Account)
	for _, name := range []string{"first", "second", "third", "fourth"} {
		account := e.createAccount(t, name)
		created[account.ID] = account
	}
	got, err = e.store.ListAccounts(e.ctx)
	if err != nil {
		t.Fatalf("ListAccounts: %v", err)
	}
	if len(got) != len(created) {
		t.Fatalf("ListAccounts returned %d accounts, want %d", len(got), len(created))
	}
	for i, account := range got {
		if created[account.ID] != account {
			t.Fatalf("account %d = %+v, want %+v", i, account, created[account.ID])
		}
		if i == 0 {
			continue
		}
		prev := got[i-1]
		if prev.CreatedAt.Before(account.CreatedAt) ||
			(prev.CreatedAt.Equal(account.CreatedAt) && prev.ID < account.ID) {
			t.Fatalf("accounts %d and %d out of order: %+v before %+v", i-1, i, prev, account)
		}
	}
}

// TestAccountNamesUnique refuses a second account of a name, ignoring
// case, naming the account that has it.
func TestAccountNamesUnique(t *testing.T) {
	e := newEnv(t)
	first := e.createAccount(t, "team-a")
	for _, name := range []string{"team-a", "Team-A", "TEAM-A"} {
		_, err := e.store.CreateAccount(e.ctx, name)
		var taken *store.NameTakenError
		if !errors.As(err, &taken) || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("CreateAccount(%q) with %q taken: error %v, want a *NameTakenError matching ErrConflict", name, first.Name, err)
		}
		if taken.Account != first {
			t.Fatalf("CreateAccount(%q): error names %+v, want %+v", name, taken.Account, first)
		}
		for _, want := range []string{first.ID, "unique", "ignoring case", "accounts add-key --account " + first.ID} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("CreateAccount(%q): error %q does not say %q", name, err, want)
			}
		}
	}
	// Σ, σ and ς fold to one letter; names that differ otherwise are free.
	e.createAccount(t, "ΟΔΥΣΣΕΥΣ")
	if _, err := e.store.CreateAccount(e.ctx, "οδυσσευς"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CreateAccount of a Greek name in lower case: error %v, want ErrConflict", err)
	}
	for _, name := range []string{"team-b", "team-a ", "team_a"} {
		e.createAccount(t, name)
	}
	accounts, err := e.store.ListAccounts(e.ctx)
	if err != nil || len(accounts) != 5 {
		t.Fatalf("ListAccounts = %d accounts, %v; want 5", len(accounts), err)
	}
}

// TestAccountNamesUniqueConcurrent creates one name from many goroutines
// on two stores, as processes sharing the bucket would: exactly one
// succeeds, and every other is told which account has the name.
func TestAccountNamesUniqueConcurrent(t *testing.T) {
	const tries = 12
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	created := make(chan store.Account, tries)
	refused := make(chan *store.NameTakenError, tries)
	concurrently(t, tries, func(i int) error {
		account, err := stores[i%len(stores)].CreateAccount(e.ctx, "team-a")
		var taken *store.NameTakenError
		switch {
		case err == nil:
			created <- account
		case errors.As(err, &taken):
			refused <- taken
		default:
			return err
		}
		return nil
	})
	close(created)
	close(refused)
	if len(created) != 1 {
		t.Fatalf("%d of %d concurrent creates of one name succeeded, want 1", len(created), tries)
	}
	winner := <-created
	for taken := range refused {
		if taken.Account.ID != winner.ID {
			t.Fatalf("a refused create names account %s, want the one created, %s", taken.Account.ID, winner.ID)
		}
	}
	accounts, err := e.store.ListAccounts(e.ctx)
	if err != nil || len(accounts) != 1 {
		t.Fatalf("ListAccounts = %+v, %v; want the one account", accounts, err)
	}
}

// TestAccountNamesOfOldStores keeps working a store whose accounts were
// created before names were unique (no name index, two accounts of one
// name): both still work, and a new account of that name is refused.
func TestAccountNamesOfOldStores(t *testing.T) {
	e := newEnv(t)
	var old []store.Account
	for i, id := range []string{"ac_2pN5uJ0cV1fBq8Ty3LwR7sKzXeD", "ac_2pN8GnlY3vWQbU4s6ZK0mXoJdHa"} {
		a := store.Account{ID: id, Name: "team-a", CreatedAt: time.Date(2026, 11, 1, 10, i, 0, 0, time.UTC)}
		value, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.kv.Create(e.ctx, "accounts."+id, value); err != nil {
			t.Fatalf("writing old account %s: %v", id, err)
		}
		old = append(old, a)
	}
	for _, a := range old {
		if got, err := e.store.GetAccount(e.ctx, a.ID); err != nil || got != a {
			t.Fatalf("GetAccount(%s) = %+v, %v; want %+v", a.ID, got, err, a)
		}
		if _, err := e.store.CreateAPIKey(e.ctx, a.ID, store.APIKeyInput{}, ""); err != nil {
			t.Fatalf("CreateAPIKey of old account %s: %v", a.ID, err)
		}
	}
	_, err := e.store.CreateAccount(e.ctx, "TEAM-A")
	var taken *store.NameTakenError
	if !errors.As(err, &taken) || taken.Account != old[0] {
		t.Fatalf("CreateAccount of an old name: error %v, want a *NameTakenError naming the oldest, %s", err, old[0].ID)
	}
	e.createAccount(t, "team-b")
	accounts, err := e.store.ListAccounts(e.ctx)
	if err != nil || len(accounts) != 3 {
		t.Fatalf("ListAccounts = %+v, %v; want the 2 old accounts and team-b", accounts, err)
	}
}
