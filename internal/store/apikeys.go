package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"time"

	"github.com/sluicehq/sluice/internal/resource"
)

// Limits of the description and metadata of an API key, a destination
// (in bytes) and a subscription (in characters), as package resource
// declares them; the store checks its declarations.
const (
	MaxDescription = resource.MaxDescription
	MaxMetadata    = resource.MaxMetadata
)

// TokenPrefix starts every token NewAPIKeyToken makes.
const TokenPrefix = "sk_"

// Lengths of a token given to CreateAPIKey or Bootstrap, in bytes.
const (
	MinTokenLength = 16
	MaxTokenLength = 256
)

const (
	// tokenBytes is how many random bytes a generated token carries.
	tokenBytes = 32
	// tokenDigits is how many base62 digits hold tokenBytes: 62^43 > 2^256.
	tokenDigits = 43
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// APIKey is a bearer credential of an account.
type APIKey struct {
	// ID is "ak_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account the key acts for.
	AccountID string `json:"account_id"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// CreatedAt is when the key was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// TokenHash is the hex SHA-256 of the token. It is never encoded in JSON
	// nor logged: with it, anyone could look for the token offline.
	TokenHash string `json:"-"`
	// Token is the bearer token. It is set only in the APIKey that
	// CreateAPIKey or Bootstrap returns, and is never stored, encoded in
	// JSON nor logged: a reply that shows it once builds its own body.
	Token string `json:"-"`
}

// LogValue returns the key as slog shows it: its id, account, description
// and creation time, without Token and TokenHash (and without Metadata, free
// text of up to 4096 bytes).
func (k APIKey) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", k.ID),
		slog.String("account_id", k.AccountID),
		slog.String("description", k.Description),
		slog.Time("created_at", k.CreatedAt),
	)
}

// apiKeyRecord is an APIKey as stored: without a token field, so that no
// code path can store the token.
type apiKeyRecord struct {
	ID          string    `json:"id"`
	AccountID   string    `json:"account_id"`
	Description string    `json:"description"`
	Metadata    string    `json:"metadata"`
	CreatedAt   time.Time `json:"created_at"`
	TokenHash   string    `json:"token_hash"`
}

func (r apiKeyRecord) apiKey() APIKey {
	return APIKey{
		ID:          r.ID,
		AccountID:   r.AccountID,
		Description: r.Description,
		Metadata:    r.Metadata,
		CreatedAt:   r.CreatedAt,
		TokenHash:   r.TokenHash,
	}
}

// apiKeyIndex is the value of api_key_hashes.<hash>: which key a token
// belongs to.
type apiKeyIndex struct {
	AccountID string `json:"account_id"`
	APIKeyID  string `json:"api_key_id"`
}

// APIKeyInput is what the creator of an API key chooses.
type APIKeyInput struct {
	Description string
	Metadata    string
}

// validate returns a *ValidationError (matching ErrInvalid) for the first
// field that breaks a limit, or nil.
func (in APIKeyInput) validate() error {
	spec := resource.APIKeys()
	if err := checkText(spec.Field("description"), in.Description); err != nil {
		return err
	}
	return checkText(spec.Field("metadata"), in.Metadata)
}

// NewAPIKeyToken returns a new bearer token: "sk_" and 43 base62 digits
// encoding 32 bytes from crypto/rand.
func NewAPIKeyToken() (string, error) {
	var random [tokenBytes]byte
	if _, err := rand.Read(random[:]); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	n := new(big.Int).SetBytes(random[:])
	base, digit := big.NewInt(int64(len(base62))), new(big.Int)
	token := make([]byte, len(TokenPrefix)+tokenDigits)
	copy(token, TokenPrefix)
	for i := len(token) - 1; i >= len(TokenPrefix); i-- {
		n.DivMod(n, base, digit)
		token[i] = base62[digit.Int64()]
	}
	return string(token), nil
}

// checkToken reports whether a token chosen by an operator is acceptable:
// MinTokenLength to MaxTokenLength printable ASCII characters, no spaces,
// so that it travels unchanged in an Authorization header.
func checkToken(token string) error {
	if len(token) < MinTokenLength || len(token) > MaxTokenLength {
		return fmt.Errorf("%w: token must be %d to %d characters long", ErrInvalid, MinTokenLength, MaxTokenLength)
	}
	for i := range len(token) {
		if c := token[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: token must be printable ASCII without spaces", ErrInvalid)
		}
	}
	return nil
}

// hashToken returns the hex SHA-256 of a token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateAPIKey creates an API key of the account. With token "" it generates
// one (NewAPIKeyToken); otherwise it uses the given token, which must be
// MinTokenLength to MaxTokenLength printable ASCII characters. The returned
// key carries the token; the store keeps only its hash.
//
// It returns an error wrapping ErrInvalid if the input or token breaks a
// limit, a *LimitError (matching ErrLimit) if the account has
// Limits.APIKeys, ErrNotFound if the account does not exist, or
// ErrConflict if a key with the same token exists.
func (s *Store) CreateAPIKey(ctx context.Context, accountID string, in APIKeyInput, token string, opts ...WriteOption) (APIKey, error) {
	// Checked here too (apiKeys checks every key it writes), so that a
	// field breaking a limit is reported before a bad token.
	if err := in.validate(); err != nil {
		return APIKey{}, err
	}
	if token == "" {
		var err error
		if token, err = NewAPIKeyToken(); err != nil {
			return APIKey{}, fmt.Errorf("generating api key token: %w", err)
		}
	} else if err := checkToken(token); err != nil {
		return APIKey{}, fmt.Errorf("api key: %w", err)
	}
	record, err := apiKeys.create(ctx, s, accountID, apiKeyRecord{
		Description: in.Description,
		Metadata:    in.Metadata,
		TokenHash:   hashToken(token),
	}, opts)
	if err != nil {
		return APIKey{}, err
	}
	key := record.apiKey()
	key.Token = token
	return key, nil
}

// cleanupTimeout bounds the removal of a half-created key's index.
const cleanupTimeout = 5 * time.Second

// deleteIndex removes the token index of a key whose record could not be
// written, even if ctx has ended. If that fails too, the index points to no
// key, and Authenticate refuses the token as it would any unknown one.
func (s *Store) deleteIndex(ctx context.Context, tokenHash string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_ = s.kv.Delete(ctx, apiKeyHashKey(tokenHash))
}

// Authenticate returns the API key whose token this is, without its token.
// It returns ErrUnauthenticated if the token matches no key, including a key
// whose record has been deleted.
func (s *Store) Authenticate(ctx context.Context, token string) (APIKey, error) {
	if token == "" || len(token) > MaxTokenLength {
		return APIKey{}, ErrUnauthenticated
	}
	return s.authenticateHash(ctx, hashToken(token))
}

// authenticateHash is Authenticate of a token already checked and hashed.
func (s *Store) authenticateHash(ctx context.Context, tokenHash string) (APIKey, error) {
	var index apiKeyIndex
	if err := s.getJSON(ctx, apiKeyHashKey(tokenHash), &index); err != nil {
		if errors.Is(err, ErrNotFound) {
			return APIKey{}, ErrUnauthenticated
		}
		return APIKey{}, fmt.Errorf("looking up api key token: %w", err)
	}
	var record apiKeyRecord
	if err := s.getJSON(ctx, apiKeys.key(index.AccountID, index.APIKeyID), &record); err != nil {
		if errors.Is(err, ErrNotFound) {
			return APIKey{}, ErrUnauthenticated
		}
		return APIKey{}, fmt.Errorf("reading api key %s: %w", index.APIKeyID, err)
	}
	if subtle.ConstantTimeCompare([]byte(record.TokenHash), []byte(tokenHash)) != 1 {
		return APIKey{}, ErrUnauthenticated
	}
	return record.apiKey(), nil
}
