package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/resource"
)

// ErrLastAPIKey is returned, wrapping ErrConflict, by DeleteAPIKey for the
// only API key of an account: without a key, nobody could use the account's
// API any more.
var ErrLastAPIKey = fmt.Errorf("%w: it is the account's only API key; create another key first, then delete this one", ErrConflict)

// apiKeys declares API keys (see family). They are stored as apiKeyRecord,
// with the hash of their token, which the public methods never return; the
// token's index is written before the record (see CreateAPIKey).
var apiKeys = family[apiKeyRecord]{
	kind:   "api_keys",
	prefix: resource.APIKeys().Prefix,
	noun:   "api key",
	meta:   func(r *apiKeyRecord) (*string, *string, *time.Time) { return &r.ID, &r.AccountID, &r.CreatedAt },
	input: func(in apiKeyRecord) apiKeyRecord {
		return apiKeyRecord{Description: in.Description, Metadata: in.Metadata, TokenHash: in.TokenHash}
	},
	check: func(_ context.Context, _ *Store, r *apiKeyRecord) error {
		return APIKeyInput{Description: r.Description, Metadata: r.Metadata}.validate()
	},
	limit: LimitAPIKeys,
	max:   func(l Limits) int { return l.APIKeys },
	reserve: func(ctx context.Context, s *Store, r apiKeyRecord) (func(), error) {
		// The index goes first: Create refuses a second key with the same
		// token before anything else is written.
		index := apiKeyIndex{AccountID: r.AccountID, APIKeyID: r.ID}
		if err := s.createJSON(ctx, apiKeyHashKey(r.TokenHash), index); err != nil {
			if errors.Is(err, ErrConflict) {
				return nil, fmt.Errorf("creating api key: %w: an api key with this token exists", ErrConflict)
			}
			return nil, fmt.Errorf("creating api key %s: indexing its token: %w", r.ID, err)
		}
		return func() { s.deleteIndex(ctx, r.TokenHash) }, nil
	},
}

// GetAPIKey returns the API key of the account with the id, without its
// token. It returns an error wrapping ErrNotFound if the account has no
// such key, including when another account has.
func (s *Store) GetAPIKey(ctx context.Context, accountID, id string) (APIKey, error) {
	record, err := apiKeys.get(ctx, s, accountID, id)
	return record.apiKey(), err
}

// ListAPIKeys returns a page of the account's API keys, newest first (by
// id), without their tokens, and the BeforeID of the next page, "" after
// the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string, page Page) ([]APIKey, string, error) {
	if match := page.Match; match != nil { // it matches APIKeys, not records
		page.Match = func(item any) (bool, error) { return match(item.(apiKeyRecord).apiKey()) }
	}
	records, next, err := apiKeys.list(ctx, s, accountID, page)
	if err != nil {
		return nil, "", err
	}
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
	record, err := apiKeys.update(ctx, s, accountID, id, func(r *apiKeyRecord) error {
		key := r.apiKey()
		if err := fn(&key); err != nil {
			return err
		}
		r.Description, r.Metadata = key.Description, key.Metadata
		return nil
	}, opts)
	if err != nil {
		return APIKey{}, err
	}
	return record.apiKey(), nil
}
