package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// keyDeletions is the value of api_key_deletions.<account_id>: the API keys
// of the account being deleted right now. DeleteAPIKey adds its key here,
// with a compare-and-swap, before it deletes the key, and counts the keys
// listed here as gone already; so of concurrent deletes, each decides
// knowing the others, and they never delete the account's last key between
// them.
type keyDeletions = pendingList[pendingDeletion]

// pendingDeletion is one DeleteAPIKey call between its claim and its
// release. Two calls deleting the same key have two claims, so that the
// release of one leaves the other's.
type pendingDeletion struct {
	Claim    string `json:"claim"`
	APIKeyID string `json:"api_key_id"`
}

// DeleteAPIKey deletes the API key of the account with the id and returns
// it as it was, without its token. The token stops working at once in
// every process: Authenticate reads the key on every call.
//
// It returns ErrLastAPIKey (matching ErrConflict) for the account's only
// key, counting as gone the keys that concurrent calls are deleting: so
// concurrent deletes never leave the account without a key. It returns an
// error wrapping ErrNotFound if the account has no such key.
func (s *Store) DeleteAPIKey(ctx context.Context, accountID, id string, opts ...WriteOption) (APIKey, error) {
	claim := rand.Text()
	claimed := false
	defer func() {
		if claimed {
			s.releaseKeyDeletion(ctx, accountID, claim)
		}
	}()
	deleted, err := apiKeys.remove(ctx, s, accountID, id, opts, func(apiKeyRecord) error {
		claimed = true
		return s.claimKeyDeletion(ctx, accountID, id, claim)
	})
	if err != nil {
		return APIKey{}, err
	}
	// The key is gone and its token refused; the index only speeds up
	// Authenticate, which refuses an index naming no key.
	s.deleteIndex(ctx, deleted.TokenHash)
	return deleted.apiKey(), nil
}

// claimKeyDeletion records that the claim is deleting the key id of the
// account, unless no other key would be left: it returns a refusal
// holding ErrLastAPIKey then. It returns an error wrapping jetstream.ErrKeyRevisionMismatch (a
// compare-and-swap conflict) if another deletion was recorded meanwhile.
//
// The pending deletions are read before the keys: a key deleted since is
// either missing from the keys listed or still pending, and counted as
// gone either way. Pending deletions of keys no longer listed are done, and
// dropped.
func (s *Store) claimKeyDeletion(ctx context.Context, accountID, id, claim string) error {
	deletionsKey := apiKeyDeletionsKey(accountID)
	deletions, rev, err := getRecord[keyDeletions](ctx, s, deletionsKey)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("reading the api key deletions of account %s: %w", accountID, err)
	}
	entries, err := s.entries(ctx, apiKeys.filter(accountID))
	if err != nil {
		return fmt.Errorf("listing api keys: %w", err)
	}
	prefix := apiKeys.key(accountID, "")
	keys := make([]string, len(entries))
	for i, entry := range entries {
		keys[i] = strings.TrimPrefix(entry.Key(), prefix)
	}
	pending := slices.DeleteFunc(deletions.Pending, func(p pendingDeletion) bool {
		return p.Claim == claim || !slices.Contains(keys, p.APIKeyID)
	})
	left := slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
		return k == id || slices.ContainsFunc(pending, func(p pendingDeletion) bool { return p.APIKeyID == k })
	})
	if len(left) == 0 {
		return refusal{ErrLastAPIKey}
	}
	deletions.Pending = append(pending, pendingDeletion{Claim: claim, APIKeyID: id})
	return writePending(ctx, s, deletionsKey, deletions, rev)
}

// releaseKeyDeletion drops the claim from the account's pending deletions,
// even if ctx has ended. If that fails, the claim stays until its key is
// gone; until then that key counts as being deleted, which can only make
// DeleteAPIKey refuse a delete, never allow one it should not.
func (s *Store) releaseKeyDeletion(ctx context.Context, accountID, claim string) {
	dropPending(ctx, s, apiKeyDeletionsKey(accountID), func(p pendingDeletion) bool { return p.Claim == claim })
}
