package store

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// credentialIndex is the value of credential_hashes.<hash>: which
// credential an authtoken belongs to.
type credentialIndex struct {
	AccountID    string `json:"account_id"`
	CredentialID string `json:"credential_id"`
}

func credentialHashKey(tokenHash string) string { return "credential_hashes." + tokenHash }

// indexToken returns the write that creates the token index of the
// credential c, at the revision that finds it free, for the batch that
// creates c; or a refusal wrapping ErrConflict if another credential has
// the token (two generated tokens never collide; this guards the index).
func (s *Store) indexToken(ctx context.Context, c Credential) (write, error) {
	key := credentialHashKey(c.TokenHash)
	rev, free, err := s.freeRevision(ctx, key)
	if err != nil {
		return write{}, err
	}
	if !free {
		return write{}, refusal{fmt.Errorf("creating credential: %w: a credential with this token exists", ErrConflict)}
	}
	value, err := json.Marshal(credentialIndex{AccountID: c.AccountID, CredentialID: c.ID})
	if err != nil {
		return write{}, fmt.Errorf("encoding %s: %w", key, err)
	}
	return write{key: key, value: value, revision: rev}, nil
}

// unindexToken returns the write that deletes the token index of the
// credential c, for the batch that deletes c, at the revision of the
// key's last message read now (as family.release, for the same reason:
// a stale read makes the delete start over rather than leave the index).
func (s *Store) unindexToken(ctx context.Context, c Credential) ([]write, error) {
	key := credentialHashKey(c.TokenHash)
	rev, _, err := s.freeRevision(ctx, key)
	if err != nil {
		return nil, err
	}
	return []write{{key: key, del: true, revision: rev}}, nil
}

// AuthenticateCredential returns the credential whose authtoken this is,
// without its token. It returns ErrUnauthenticated if the token matches no
// credential, including a deleted one, or an error saying what failed.
//
// It finds the credential through the token's index, written with the
// credential. Credentials created before the index existed have none: the
// first token it finds no index of makes it index them all, once in the
// life of the store (indexOlderTokens), and look again.
func (s *Store) AuthenticateCredential(ctx context.Context, token string) (Credential, error) {
	if token == "" || len(token) > MaxTokenLength {
		return Credential{}, ErrUnauthenticated
	}
	tokenHash := hashToken(token)
	var index credentialIndex
	err := s.getJSON(ctx, credentialHashKey(tokenHash), &index)
	if errors.Is(err, ErrNotFound) && s.indexOlderTokens(ctx) {
		err = s.getJSON(ctx, credentialHashKey(tokenHash), &index)
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return Credential{}, ErrUnauthenticated
		}
		return Credential{}, fmt.Errorf("looking up credential token: %w", err)
	}
	var c Credential
	if err := s.getJSON(ctx, credentials.key(index.AccountID, index.CredentialID), &c); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Credential{}, ErrUnauthenticated
		}
		return Credential{}, fmt.Errorf("reading credential %s: %w", index.CredentialID, err)
	}
	if subtle.ConstantTimeCompare([]byte(c.TokenHash), []byte(tokenHash)) != 1 {
		return Credential{}, ErrUnauthenticated
	}
	c.Token = ""
	return c, nil
}

// indexOlderTokens runs indexCredentialTokens once in the life of the
// store, on the first token AuthenticateCredential finds no index of, and
// reports whether it ran now (the caller then looks again). A run that
// fails is tried again on the next such token; one that succeeds is not
// repeated, so a flood of unknown tokens costs one scan per process.
func (s *Store) indexOlderTokens(ctx context.Context) bool {
	t := &s.tokensIndexed
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	if _, err := s.indexCredentialTokens(ctx); err != nil {
		return false
	}
	t.done = true
	return true
}

// indexCredentialTokens writes the token index of every credential, of
// every account, that has none: those created before the index existed,
// which AuthenticateCredential does not find until then. It returns how
// many it indexed. Any number of processes may run it at once, alongside
// creates and deletes: an index is only created where none is, and one
// left by a credential deleted meanwhile names no credential, which
// AuthenticateCredential refuses.
func (s *Store) indexCredentialTokens(ctx context.Context) (int, error) {
	var (
		indexed int
		errs    []error
	)
	err := s.eachEntry(ctx, credentials.kind+".>", func(entry jetstream.KeyValueEntry) {
		var c Credential
		if err := json.Unmarshal(entry.Value(), &c); err != nil {
			errs = append(errs, fmt.Errorf("decoding %s: %w", entry.Key(), err))
			return
		}
		if c.TokenHash == "" {
			return
		}
		err := s.createJSON(ctx, credentialHashKey(c.TokenHash), credentialIndex{AccountID: c.AccountID, CredentialID: c.ID})
		switch {
		case err == nil:
			indexed++
		case !errors.Is(err, ErrConflict):
			errs = append(errs, fmt.Errorf("indexing the token of credential %s: %w", c.ID, err))
		}
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("listing credentials: %w", err))
	}
	return indexed, errors.Join(errs...)
}
