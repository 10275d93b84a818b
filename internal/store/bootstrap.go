package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// What Bootstrap creates.
const (
	BootstrapAccountName    = "default"
	BootstrapKeyDescription = "created by bootstrap"
)

// bootstrapLease is how long a claim on the bootstrap key stops other
// processes from bootstrapping. A process that claimed and then died before
// creating a key leaves the store without keys; after the lease another
// process may take over the claim.
const bootstrapLease = time.Minute

// bootstrapClaim is the value of the bootstrap key.
type bootstrapClaim struct {
	ClaimedAt time.Time `json:"claimed_at"`
}

// BootstrapResult says what Bootstrap did.
type BootstrapResult struct {
	// Created reports whether Bootstrap created an account and a key.
	Created bool
	// Account is the account created; zero unless Created.
	Account Account
	// Key is the API key created, with its Token; zero unless Created.
	Key APIKey
}

// Bootstrap gives a new installation its first credential. When the store
// holds no API key record at all (token index entries of keys whose
// creation did not finish do not count), it creates an account named
// "default" (or takes the account of that name if one exists, left by a
// bootstrap that died before its key) and an API key of it with the given
// token, or a generated one when token is "". Otherwise it changes nothing
// and returns Created false.
//
// Several processes may call it at once: each claims the bootstrap key with
// a create-if-absent write first, and only the one that wins creates
// anything. A claim older than a minute on a store still without keys (its
// holder died, or every key was deleted since) may be taken over.
//
// It returns an error wrapping ErrInvalid if token is not "" and not
// acceptable to CreateAPIKey.
func (s *Store) Bootstrap(ctx context.Context, token string) (BootstrapResult, error) {
	if token != "" {
		if err := checkToken(token); err != nil {
			return BootstrapResult{}, fmt.Errorf("bootstrap: %w", err)
		}
	}
	// The key records say whether a usable key exists, not the token index:
	// CreateAPIKey writes the index first, so a crash before the record is
	// written leaves an index entry that authenticates nothing.
	keys, err := s.entries(ctx, allAPIKeys)
	if err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap: looking for api keys: %w", err)
	}
	if len(keys) > 0 {
		return BootstrapResult{}, nil
	}
	claimed, err := s.claimBootstrap(ctx)
	if err != nil || !claimed {
		return BootstrapResult{}, err
	}
	if token != "" {
		// A bootstrap with this token that died half-way left its index
		// behind; CreateAPIKey would refuse the token as taken.
		if err := s.removeOrphanIndex(ctx, hashToken(token)); err != nil {
			return BootstrapResult{}, fmt.Errorf("bootstrap: %w", err)
		}
	}

	account, err := s.CreateAccount(ctx, BootstrapAccountName)
	var taken *NameTakenError
	if errors.As(err, &taken) && taken.Account.Name != "" {
		// A bootstrap that died before creating the key left its account
		// (or an operator made one of that name): it has no key, as no
		// account has, so give it this one.
		account, err = taken.Account, nil
	}
	if err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap: %w", err)
	}
	key, err := s.CreateAPIKey(ctx, account.ID, APIKeyInput{Description: BootstrapKeyDescription}, token)
	if err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap: %w", err)
	}
	return BootstrapResult{Created: true, Account: account, Key: key}, nil
}

// claimBootstrap reports whether this call won the bootstrap key: it was
// absent, or its claim had outlived bootstrapLease.
func (s *Store) claimBootstrap(ctx context.Context) (bool, error) {
	claim, err := json.Marshal(bootstrapClaim{ClaimedAt: now()})
	if err != nil {
		return false, fmt.Errorf("bootstrap: encoding claim: %w", err)
	}
	_, err = s.kv.Create(ctx, bootstrapKey, claim)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false, fmt.Errorf("bootstrap: claiming: %w", err)
	}

	entry, err := s.kv.Get(ctx, bootstrapKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil // someone removed the claim meanwhile: leave it to them
	}
	if err != nil {
		return false, fmt.Errorf("bootstrap: reading claim: %w", err)
	}
	var held bootstrapClaim
	if err := json.Unmarshal(entry.Value(), &held); err == nil && time.Since(held.ClaimedAt) < bootstrapLease {
		return false, nil
	}
	// The claim is stale (or unreadable): take it over, unless another
	// process does so first.
	if _, err := s.kv.Update(ctx, bootstrapKey, claim, entry.Revision()); err != nil {
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			return false, nil
		}
		return false, fmt.Errorf("bootstrap: taking over claim: %w", err)
	}
	return true, nil
}

// removeOrphanIndex deletes the token index entry of tokenHash if the key it
// points to has no record. Bootstrap calls it while it holds the claim and
// no key record exists, so no other key creation can be under way.
func (s *Store) removeOrphanIndex(ctx context.Context, tokenHash string) error {
	entry, err := s.kv.Get(ctx, apiKeyHashKey(tokenHash))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading token index: %w", err)
	}
	var index apiKeyIndex
	if err := json.Unmarshal(entry.Value(), &index); err == nil {
		_, err := s.kv.Get(ctx, apiKeys.key(index.AccountID, index.APIKeyID))
		if err == nil {
			return nil // not an orphan: CreateAPIKey will say the token is taken
		}
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("reading api key %s: %w", index.APIKeyID, err)
		}
	}
	// Deleted only if unchanged since read, so a rewrite meanwhile is kept.
	if err := s.kv.Delete(ctx, apiKeyHashKey(tokenHash), jetstream.LastRevision(entry.Revision())); err != nil {
		return fmt.Errorf("removing the token index of an unfinished api key: %w", err)
	}
	return nil
}
