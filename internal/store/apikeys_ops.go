package store

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/schemas"
)

// ErrLastAPIKey is returned, wrapping ErrConflict, by DeleteAPIKey for the
// only API key of an account: without a key, nobody could use the account's
// API any more.
var ErrLastAPIKey = fmt.Errorf("%w: it is the account's only API key; create another key first, then delete this one", ErrConflict)

// GetAPIKey returns the API key of the account with the id, without its
// token. It returns an error wrapping ErrNotFound if the account has no
// such key, including when another account has.
func (s *Store) GetAPIKey(ctx context.Context, accountID, id string) (APIKey, error) {
	if err := checkOwnedID(accountID, schemas.PrefixAPIKey, id); err != nil {
		return APIKey{}, fmt.Errorf("api key %q: %w", id, err)
	}
	record, _, err := getRecord[apiKeyRecord](ctx, s, apiKeyKey(accountID, id))
	if err != nil {
		return APIKey{}, fmt.Errorf("reading api key %s: %w", id, err)
	}
	return record.apiKey(), nil
}

// ListAPIKeys returns a page of the account's API keys, newest first (by
// id), without their tokens, and the BeforeID of the next page, "" after
// the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string, page Page) ([]APIKey, string, error) {
	page, err := page.resolve(schemas.PrefixAPIKey)
	if err != nil {
		return nil, "", err
	}
	if err := schemas.CheckID(schemas.PrefixAccount, accountID); err != nil {
		return nil, "", fmt.Errorf("account %q: %w", accountID, ErrNotFound)
	}
	records, err := listRecords[apiKeyRecord](ctx, s, accountAPIKeys(accountID))
	if err != nil {
		return nil, "", fmt.Errorf("listing api keys: %w", err)
	}
	records, next := paginate(records, func(r apiKeyRecord) string { return r.ID }, page)
	keys := make([]APIKey, len(records))
	for i, r := range records {
		keys[i] = r.apiKey()
	}
	return keys, next, nil
}

// UpdateAPIKey changes the description or metadata of the API key of the
// account with the id: it calls fn on the stored key and writes the
// Description and Metadata fn leaves, if the key has not changed in the
// meantime; otherwise it starts over on a fresh copy, so fn may be called
// several times and must have no other effect. The token cannot change.
//
// It returns the key written, without its token, or the error of fn as it
// is, a *ValidationError (matching ErrInvalid) for a field that breaks a
// limit, an error wrapping ErrNotFound if the account has no such key, or
// one wrapping ErrConflict if the key kept changing under concurrent
// updates.
func (s *Store) UpdateAPIKey(ctx context.Context, accountID, id string, fn func(*APIKey) error, opts ...WriteOption) (APIKey, error) {
	if err := checkOwnedID(accountID, schemas.PrefixAPIKey, id); err != nil {
		return APIKey{}, fmt.Errorf("api key %q: %w", id, err)
	}
	var fnErr error
	_, after, err := modify(ctx, s, apiKeyKey(accountID, id), func(r *apiKeyRecord) error {
		key := r.apiKey()
		if fnErr = fn(&key); fnErr != nil {
			return fnErr
		}
		in := APIKeyInput{Description: key.Description, Metadata: key.Metadata}
		if err := in.validate(); err != nil {
			return err
		}
		r.Description, r.Metadata = in.Description, in.Metadata
		return nil
	}, newWriteOptions(opts), nil)
	if err != nil {
		return APIKey{}, passOrWrap(err, fnErr, "updating api key "+id)
	}
	return after.value.apiKey(), nil
}
