package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/schemas"
)

// maxAccountName is the longest account name, in bytes.
const maxAccountName = 255

// Account owns API keys, subscriptions and destinations.
type Account struct {
	// ID is "ac_" and a KSUID.
	ID string `json:"id"`
	// Name is what operators call the account.
	Name string `json:"name"`
	// CreatedAt is when the account was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
}

// CreateAccount creates an account with the given name. It returns an error
// wrapping ErrInvalid if the name is empty, longer than 255 bytes or not
// UTF-8.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, error) {
	if name == "" || len(name) > maxAccountName || !utf8.ValidString(name) {
		return Account{}, fmt.Errorf("account name %q: %w: must be 1 to %d bytes of UTF-8", name, ErrInvalid, maxAccountName)
	}
	var account Account
	account.ID, account.CreatedAt = s.newID(schemas.PrefixAccount)
	account.Name = name
	if err := s.createJSON(ctx, accountKey(account.ID), account); err != nil {
		return Account{}, fmt.Errorf("creating account %s: %w", account.ID, err)
	}
	return account, nil
}

// GetAccount returns the account with the id. It returns an error wrapping
// ErrNotFound if there is none, or if id is not an account id.
func (s *Store) GetAccount(ctx context.Context, id string) (Account, error) {
	if err := schemas.CheckID(schemas.PrefixAccount, id); err != nil {
		return Account{}, fmt.Errorf("account %q: %w", id, ErrNotFound)
	}
	var account Account
	if err := s.getJSON(ctx, accountKey(id), &account); err != nil {
		return Account{}, fmt.Errorf("reading account %s: %w", id, err)
	}
	return account, nil
}

// newestFirst orders accounts by creation time, newest first. CreatedAt is
// to the millisecond; ids break its ties, and sort by creation exactly
// (see Store.newID).
func newestFirst(a, b Account) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// ListAccounts returns every account, newest first.
func (s *Store) ListAccounts(ctx context.Context) ([]Account, error) {
	entries, err := s.entries(ctx, allAccounts)
	if err != nil {
		return nil, fmt.Errorf("listing accounts: %w", err)
	}
	accounts := make([]Account, 0, len(entries))
	var errs []error
	for _, entry := range entries {
		var account Account
		if err := json.Unmarshal(entry.Value(), &account); err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
			continue
		}
		accounts = append(accounts, account)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("listing accounts: %w", err)
	}
	slices.SortFunc(accounts, newestFirst)
	return accounts, nil
}
