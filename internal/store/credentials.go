package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/acl"
	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/schemas"
)

// Credential is a tunnel credential of an account (specification sections
// 2.4 and 5): the authtoken an agent connects with, what it may bind
// (ACL, see package acl) and, optionally, the bot user that owns it.
type Credential struct {
	// ID is "cr_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the credential.
	AccountID string `json:"account_id"`
	// CreatedAt is when the credential was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// ACL is its rules (acl.Check); none means no restriction.
	ACL []string `json:"acl"`
	// OwnerID is a bot user of the account, or "".
	OwnerID string `json:"owner_id"`
	// TokenHash is the hex SHA-256 of the token, set by the store. It is
	// never returned by the API nor logged.
	TokenHash string `json:"token_hash"`
	// Token is the authtoken. It is set only in the Credential that
	// CreateCredential returns, and is never stored, encoded in JSON nor
	// logged: the answer that shows it once builds its own body.
	Token string `json:"-"`
}

// LogValue returns the credential as slog shows it: without Token and
// TokenHash (and without Metadata, free text of up to 4096 bytes).
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", c.ID),
		slog.String("account_id", c.AccountID),
		slog.String("description", c.Description),
		slog.Any("acl", c.ACL),
		slog.String("owner_id", c.OwnerID),
		slog.Time("created_at", c.CreatedAt),
	)
}

// check returns a *ValidationError for the first field that breaks a rule,
// or nil.
func (c Credential) check() error {
	spec := resource.Credentials()
	if err := checkText(spec.Field("description"), c.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), c.Metadata); err != nil {
		return err
	}
	if len(c.ACL) > MaxACLRules {
		return invalid("acl", "has %d rules, more than %d: merge them, with bind:*.<domain> for a domain's names", len(c.ACL), MaxACLRules)
	}
	var rule *acl.RuleError
	if err := acl.Check(c.ACL); errors.As(err, &rule) {
		return invalid(fmt.Sprintf("acl[%d]", rule.Index), "%s", rule)
	}
	if c.OwnerID != "" && schemas.CheckID(schemas.PrefixBotUser, c.OwnerID) != nil {
		return invalid("owner_id", "must be the id of a bot user of the account (bot_...), and is %q", c.OwnerID)
	}
	return nil
}

// MaxACLRules is the most rules of a credential's ACL.
const MaxACLRules = 100

// credentials declares tunnel credentials (see family). A credential's
// owner is claimed in the batch that writes it (claimOwner), so a bot user
// deleted at the same time is seen by one of the two writers. The index of
// its token (credential_hashes.<hash>, see AuthenticateCredential) is
// created in the batch that creates it, and deleted in the one that
// deletes it.
var credentials = family[Credential]{
	kind:   "credentials",
	prefix: resource.Credentials().Prefix,
	noun:   "credential",
	meta:   func(c *Credential) (*string, *string, *time.Time) { return &c.ID, &c.AccountID, &c.CreatedAt },
	input: func(in Credential) Credential {
		return Credential{Description: in.Description, Metadata: in.Metadata, ACL: slices.Clone(in.ACL),
			OwnerID: in.OwnerID, TokenHash: in.TokenHash}
	},
	check: func(_ context.Context, _ *Store, c *Credential) error { return c.check() },
	limit: LimitCredentials,
	max:   func(l Limits) int { return l.Credentials },
	rule: func(was, v Credential) error {
		if was.TokenHash != v.TokenHash {
			return invalid("token", "cannot be changed: create a new credential, and delete this one")
		}
		return nil
	},
	writes: func(ctx context.Context, s *Store, before *Credential, after Credential) ([]write, error) {
		var writes []write
		if before == nil {
			index, err := s.indexToken(ctx, after)
			if err != nil {
				return nil, err
			}
			writes = append(writes, index)
		}
		if after.OwnerID == "" || before != nil && before.OwnerID == after.OwnerID {
			return writes, nil
		}
		claim, err := s.claimOwner(ctx, after.AccountID, after.OwnerID)
		return append(writes, claim...), err
	},
	cascade: func(ctx context.Context, s *Store, c Credential) ([]write, error) { return s.unindexToken(ctx, c) },
}

// claimOwner returns the write that rewrites the bot user as it is, at its
// revision, so that a delete of it meanwhile makes one of the two start
// over; or a *ValidationError of owner_id if the account has no such bot
// user.
func (s *Store) claimOwner(ctx context.Context, accountID, botUserID string) ([]write, error) {
	claim, err := s.claimKey(ctx, botUsers.key(accountID, botUserID))
	if errors.Is(err, ErrNotFound) {
		return nil, &ValidationError{Field: "owner_id", Err: ErrNotFound,
			Msg: fmt.Sprintf("names no bot user of the account: %s; give the id of one (GET /bot_users), or none", botUserID)}
	}
	if err != nil {
		return nil, err
	}
	return []write{claim}, nil
}

// CredentialTokenPrefix starts every credential's token.
const CredentialTokenPrefix = "ct_"

// CreateCredential creates a tunnel credential of the account with the
// Description, Metadata, ACL and OwnerID of in, and a new token made as an
// API key's (NewAPIKeyToken), of which the store keeps only the hash. The
// returned credential carries the token.
//
// It returns a *ValidationError (matching ErrInvalid) for a field that
// breaks a rule, including an owner_id that names no bot user of the
// account, a *LimitError (matching ErrLimit) if the account has
// Limits.Credentials, or an error wrapping ErrNotFound if the account does
// not exist.
func (s *Store) CreateCredential(ctx context.Context, accountID string, in Credential, opts ...WriteOption) (Credential, error) {
	token, err := NewAPIKeyToken()
	if err != nil {
		return Credential{}, fmt.Errorf("generating credential token: %w", err)
	}
	token = CredentialTokenPrefix + strings.TrimPrefix(token, TokenPrefix)
	in.TokenHash = hashToken(token)
	c, err := credentials.create(ctx, s, accountID, in, opts)
	if err != nil {
		return Credential{}, err
	}
	c.Token = token
	return c, nil
}

// GetCredential returns the credential of the account with the id, or an
// error wrapping ErrNotFound if the account has no such credential.
func (s *Store) GetCredential(ctx context.Context, accountID, id string) (Credential, error) {
	return credentials.get(ctx, s, accountID, id)
}

// ListCredentials returns a page of the account's credentials, newest
// first (by id), and the BeforeID of the next page, "" after the last.
func (s *Store) ListCredentials(ctx context.Context, accountID string, page Page) ([]Credential, string, error) {
	return credentials.list(ctx, s, accountID, page)
}

// UpdateCredential changes the credential of the account with the id: it
// calls fn on the stored credential, checks the result as CreateCredential
// does, and writes it if the credential has not changed in the meantime;
// otherwise it starts over on a fresh copy, so fn may be called several
// times. Changes fn makes to ID, AccountID, CreatedAt and Token are
// discarded; one to TokenHash is refused.
//
// It returns the credential written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid), an error wrapping ErrNotFound if
// the account has no such credential, or one wrapping ErrConflict if it
// kept changing under concurrent updates.
func (s *Store) UpdateCredential(ctx context.Context, accountID, id string, fn func(*Credential) error, opts ...WriteOption) (Credential, error) {
	c, err := credentials.update(ctx, s, accountID, id, fn, opts)
	c.Token = ""
	return c, err
}

// DeleteCredential deletes the credential of the account with the id, and
// returns it as it was. It returns an error wrapping ErrNotFound if the
// account has no such credential.
func (s *Store) DeleteCredential(ctx context.Context, accountID, id string, opts ...WriteOption) (Credential, error) {
	return credentials.remove(ctx, s, accountID, id, opts, nil)
}

// OwnerInUseError is a bot user that cannot be deleted because
// credentials of its account name it their owner. It matches ErrConflict.
type OwnerInUseError struct {
	// BotUserID is the bot user that was to be deleted.
	BotUserID string
	// Credentials are the ids of the credentials it owns, sorted.
	Credentials []string
}

// Error names the bot user and its credentials.
func (e *OwnerInUseError) Error() string {
	return fmt.Sprintf("bot user %s owns the credentials %s: delete them, or give them another owner, first",
		e.BotUserID, strings.Join(e.Credentials, ", "))
}

// Unwrap returns ErrConflict.
func (e *OwnerInUseError) Unwrap() error { return ErrConflict }
