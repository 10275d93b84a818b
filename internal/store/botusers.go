package store

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/sluicehq/sluice/internal/resource"
)

// BotUser is a bot user of an account (specification sections 2.3 and
// 4.2): an identity for automation, named uniquely within its account.
type BotUser struct {
	// ID is "bot_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the bot user.
	AccountID string `json:"account_id"`
	// CreatedAt is when the bot user was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Name is 1 to 255 bytes of UTF-8 without control characters, unique
	// within the account ignoring case.
	Name string `json:"name"`
	// Active is true on creation; an update may change it.
	Active bool `json:"active"`
}

// check returns a *ValidationError for the first field that breaks a rule,
// or nil.
func (b BotUser) check() error {
	name := resource.BotUsers().Field("name")
	if b.Name == "" {
		return invalid("name", "is required: give the bot user a name of 1 to %s", name.Limit())
	}
	if err := checkText(name, b.Name); err != nil {
		return err
	}
	for i, r := range b.Name {
		switch {
		case unicode.IsControl(r):
			return invalid("name", "must not contain control characters, and has %U at byte %d: remove it", r, i)
		case unicode.Is(unicode.Cf, r):
			// Invisible: "deploy" and "deploy\u200b" would look one name.
			return invalid("name", "must not contain invisible format characters, and has %U at byte %d: remove it", r, i)
		}
	}
	if strings.TrimSpace(b.Name) != b.Name {
		return invalid("name", "must not start or end with white space: remove it")
	}
	return nil
}

// botUsers declares bot users (see family): their names are unique within
// the account, ignoring case.
var botUsers = family[BotUser]{
	kind:   "bot_users",
	prefix: resource.BotUsers().Prefix,
	noun:   "bot user",
	meta:   func(b *BotUser) (*string, *string, *time.Time) { return &b.ID, &b.AccountID, &b.CreatedAt },
	input:  func(in BotUser) BotUser { return BotUser{Name: in.Name, Active: true} },
	check:  func(_ context.Context, _ *Store, b *BotUser) error { return b.check() },
	limit:  LimitBotUsers,
	max:    func(l Limits) int { return l.BotUsers },
	unique: &uniqueIndex[BotUser]{
		field: "name",
		value: func(b BotUser) string { return b.Name },
		key:   botUserNameKey,
	},
}

// CreateBotUser creates a bot user of the account with the Name of in,
// active; the store sets ID, AccountID, CreatedAt and Active.
//
// It returns a *ValidationError (matching ErrInvalid) for a name that
// breaks a rule, a *TakenError (matching ErrConflict) if a bot user of the
// account has the name, ignoring case, a *LimitError (matching ErrLimit)
// if the account has Limits.BotUsers, or an error wrapping ErrNotFound if
// the account does not exist. Two creates of one name at once, from any
// processes, never both succeed.
func (s *Store) CreateBotUser(ctx context.Context, accountID string, in BotUser, opts ...WriteOption) (BotUser, error) {
	return botUsers.create(ctx, s, accountID, in, opts)
}

// GetBotUser returns the bot user of the account with the id. It returns an
// error wrapping ErrNotFound if the account has no such bot user,
// including when another account has.
func (s *Store) GetBotUser(ctx context.Context, accountID, id string) (BotUser, error) {
	return botUsers.get(ctx, s, accountID, id)
}

// ListBotUsers returns a page of the account's bot users, newest first (by
// id), and the BeforeID of the next page, "" after the last page.
//
// It returns a *ValidationError (matching ErrInvalid) for a page limit
// outside 1 to MaxPageLimit or a malformed BeforeID, or an error wrapping
// ErrNotFound if accountID is not an account id.
func (s *Store) ListBotUsers(ctx context.Context, accountID string, page Page) ([]BotUser, string, error) {
	return botUsers.list(ctx, s, accountID, page)
}

// UpdateBotUser changes the bot user of the account with the id: it calls
// fn on the stored bot user, checks the result as CreateBotUser does, and
// writes it, moving its name's index on a rename, if the bot user has not
// changed in the meantime; otherwise it starts over on a fresh copy, so fn
// may be called several times and must have no other effect. Changes fn
// makes to ID, AccountID and CreatedAt are discarded.
//
// It returns the bot user written, or the error of fn as it is, a
// *ValidationError (matching ErrInvalid) for a name that breaks a rule, a
// *TakenError (matching ErrConflict) if another bot user of the account
// has the new name, an error wrapping ErrNotFound if the account has no
// such bot user, or one wrapping ErrConflict if the bot user kept changing
// under concurrent updates.
func (s *Store) UpdateBotUser(ctx context.Context, accountID, id string, fn func(*BotUser) error, opts ...WriteOption) (BotUser, error) {
	return botUsers.update(ctx, s, accountID, id, fn, opts)
}

// DeleteBotUser deletes the bot user of the account with the id, which
// frees its name, and returns it as it was. It returns an
// *OwnerInUseError (matching ErrConflict) naming the credentials the bot
// user owns, if any: it is not deleted then. It returns an error wrapping
// ErrNotFound if the account has no such bot user.
//
// A credential given the bot user as its owner at the same time rewrites
// the bot user in its batch (claimOwner), and the delete is a
// compare-and-swap on the revision read before the credentials were: one
// of the two writers sees the other.
func (s *Store) DeleteBotUser(ctx context.Context, accountID, id string, opts ...WriteOption) (BotUser, error) {
	owns := func(c Credential) bool { return c.OwnerID == id }
	return botUsers.remove(ctx, s, accountID, id, opts, refuseWhileUsed[BotUser](ctx, s, &credentials, accountID, owns, func(ids []string) error {
		return &OwnerInUseError{BotUserID: id, Credentials: ids}
	}))
}
