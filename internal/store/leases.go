package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// leasesKind is the key space of leases: leases.<name>, a Lease.
const leasesKind = "leases"

// Lease is a job that one process at a time runs: the process holding it
// until it expires.
type Lease struct {
	Holder    string    `json:"holder"`
	ExpiresAt time.Time `json:"expires_at"`
}

// TakeLease takes the lease of the name for the holder until ttl from
// now, or extends it if the holder has it: true if the holder has it then.
// It is a compare-and-swap on the lease's key, so of two processes taking
// an expired or absent lease at once one gets it. A holder that stops
// extending its lease loses it when it expires.
func (cs Certificates) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	key := leasesKind + "." + name
	now := cs.store.now()
	value, err := json.Marshal(Lease{Holder: holder, ExpiresAt: now.Add(ttl)})
	if err != nil {
		return false, err
	}
	entry, err := cs.store.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		_, err = cs.store.kv.Create(ctx, key, value)
	case err != nil:
		return false, fmt.Errorf("reading the lease %s: %w", name, err)
	default:
		var held Lease
		if json.Unmarshal(entry.Value(), &held) == nil && held.Holder != holder && now.Before(held.ExpiresAt) {
			return false, nil
		}
		_, err = cs.store.kv.Update(ctx, key, value, entry.Revision())
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || isRevisionMismatch(err) {
		return false, nil // another process came first
	}
	if err != nil {
		return false, fmt.Errorf("taking the lease %s: %w", name, err)
	}
	return true, nil
}

// acmeAccountsKind is the key space of sluice's ACME accounts, one per
// directory: acme_accounts.<hash of the directory URL>.
const acmeAccountsKind = "acme_accounts"

// ACMEAccount is sluice's account with an ACME certificate authority: its
// key (never logged, never in an API answer; encrypted at rest with the
// store's --data-key-file) and the account's URL there.
type ACMEAccount struct {
	Directory     string `json:"directory"`
	PrivateKeyPEM string `json:"private_key_pem"`
	URL           string `json:"url"`
}

func acmeAccountKey(directory string) string { return acmeAccountsKind + "." + foldedHash(directory) }

// ACMEAccount returns sluice's account with the authority of the
// directory URL, or an error wrapping ErrNotFound if it has none yet.
func (cs Certificates) ACMEAccount(ctx context.Context, directory string) (ACMEAccount, error) {
	var a ACMEAccount
	if err := cs.store.getJSON(ctx, acmeAccountKey(directory), &a); err != nil {
		return ACMEAccount{}, fmt.Errorf("reading the ACME account of %s: %w", directory, err)
	}
	return a, nil
}

// CreateACMEAccount stores sluice's account with the authority of its
// directory. It returns an error wrapping ErrConflict if one is stored
// already: the caller reads that one.
func (cs Certificates) CreateACMEAccount(ctx context.Context, a ACMEAccount) error {
	if err := cs.store.createJSON(ctx, acmeAccountKey(a.Directory), a); err != nil {
		return fmt.Errorf("storing the ACME account of %s: %w", a.Directory, err)
	}
	return nil
}
