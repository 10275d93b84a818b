package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
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

// CreateAccount creates an account with the given name. Names are unique
// ignoring case (Unicode simple case folding, as strings.EqualFold): with
// "team-a" taken, "Team-A" is refused too; the name is kept as given.
//
// It returns an error wrapping ErrInvalid if the name is empty, longer than
// 255 bytes or not UTF-8, or a *NameTakenError (matching ErrConflict) if an
// account has the name. Two creates of one name at once, from any
// processes, never both succeed: the account is written in one atomic batch
// with its name's index key, which must not exist.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, error) {
	if name == "" || len(name) > maxAccountName || !utf8.ValidString(name) {
		return Account{}, fmt.Errorf("account name %q: %w: must be 1 to %d bytes of UTF-8", name, ErrInvalid, maxAccountName)
	}
	// Accounts created before names had an index have no index key: look
	// for them by name. Of duplicates such stores may hold, the oldest
	// is named.
	accounts, err := s.ListAccounts(ctx)
	if err != nil {
		return Account{}, fmt.Errorf("creating account %q: %w", name, err)
	}
	for _, a := range slices.Backward(accounts) {
		if strings.EqualFold(a.Name, name) {
			return Account{}, &NameTakenError{Name: name, Account: a}
		}
	}

	var account Account
	account.ID, account.CreatedAt = s.newID(schemas.PrefixAccount)
	account.Name = name
	value, err := json.Marshal(account)
	if err != nil {
		return Account{}, err
	}
	index, err := json.Marshal(accountNameIndex{AccountID: account.ID})
	if err != nil {
		return Account{}, err
	}
	nameKey := accountNameKey(name)
	_, err = s.commit(ctx, writeOptions{}, nil, write{key: nameKey, value: index}, write{key: accountKey(account.ID), value: value})
	if casConflict(err) {
		return Account{}, s.nameTaken(ctx, name, nameKey, err)
	}
	if err != nil {
		return Account{}, fmt.Errorf("creating account %s: %w", account.ID, err)
	}
	return account, nil
}

// nameTaken returns the *NameTakenError of a create of an account whose
// name index key exists, naming the account the key names, or the create's
// error wrapping ErrConflict if that cannot be read.
func (s *Store) nameTaken(ctx context.Context, name, nameKey string, createErr error) error {
	index, _, err := getRecord[accountNameIndex](ctx, s, nameKey)
	if err != nil {
		return fmt.Errorf("creating account %q: %w: %w", name, ErrConflict, createErr)
	}
	taken := &NameTakenError{Name: name, Account: Account{ID: index.AccountID}}
	if account, err := s.GetAccount(ctx, index.AccountID); err == nil {
		taken.Account = account
	}
	return taken
}

// accountNameIndex is the value of an account name's index key: the
// account that has the name.
type accountNameIndex struct {
	AccountID string `json:"account_id"`
}

// foldName returns the name with each rune replaced by the smallest rune
// of its Unicode simple case folding orbit, so that two names are
// strings.EqualFold exactly when their foldName are equal.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, name)
}

// NameTakenError is the error of a create of an account whose name an
// account has already, ignoring case. It matches ErrConflict.
type NameTakenError struct {
	// Name is the name asked for.
	Name string
	// Account is the account that has it; only its ID is set if the
	// account could not be read.
	Account Account
}

func (e *NameTakenError) Error() string {
	held := e.Account.ID
	if e.Account.Name != "" && e.Account.Name != e.Name {
		held = fmt.Sprintf("%s, named %q", e.Account.ID, e.Account.Name)
	}
	return fmt.Sprintf("an account named %q exists already (%s); account names are unique, ignoring case: use that account (sluice accounts add-key --account %s gives it another API key), or choose another name",
		e.Name, held, e.Account.ID)
}

// Is reports whether target is ErrConflict.
func (e *NameTakenError) Is(target error) bool { return target == ErrConflict }

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
