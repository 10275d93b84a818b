package store_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestBotUserLifecycle creates, reads, lists, renames, deactivates and
// deletes a bot user: active on creation, stored as its JSON, its name's
// index key written with it and removed with it; another account's id is
// not found.
func TestBotUserLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")

	b, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{ID: "bot_ignored", AccountID: other.ID, Name: "Deploy Bot"})
	if err != nil {
		t.Fatalf("CreateBotUser: %v", err)
	}
	if schemas.CheckID(schemas.PrefixBotUser, b.ID) != nil || b.AccountID != account.ID || b.Name != "Deploy Bot" || !b.Active || b.CreatedAt.IsZero() {
		t.Fatalf("created %+v; want a bot_ id of the account, the name, active", b)
	}
	raw := e.rawEntries(t)
	want, _ := json.Marshal(b)
	if got := raw["bot_users."+account.ID+"."+b.ID]; got != string(want) {
		t.Fatalf("stored %s, want %s", got, want)
	}
	if n := countPrefix(raw, "bot_user_names."+account.ID+"."); n != 1 {
		t.Fatalf("%d name index keys, want 1", n)
	}
	if got, err := e.store.GetBotUser(e.ctx, account.ID, b.ID); err != nil || got != b {
		t.Fatalf("GetBotUser = %+v, %v; want %+v", got, err, b)
	}

	renamed, err := e.store.UpdateBotUser(e.ctx, account.ID, b.ID, func(u *store.BotUser) error {
		u.Name, u.Active, u.ID, u.AccountID = "Release Bot", false, "bot_other", other.ID
		return nil
	})
	if err != nil || renamed.Name != "Release Bot" || renamed.Active || renamed.ID != b.ID || renamed.AccountID != account.ID || !renamed.CreatedAt.Equal(b.CreatedAt) {
		t.Fatalf("UpdateBotUser = %+v, %v; want renamed, inactive, same id, account and created_at", renamed, err)
	}
	if n := countPrefix(e.rawEntries(t), "bot_user_names."+account.ID+"."); n != 1 {
		t.Fatalf("%d name index keys after the rename, want 1", n)
	}
	fnErr := errors.New("no")
	if _, err := e.store.UpdateBotUser(e.ctx, account.ID, b.ID, func(*store.BotUser) error { return fnErr }); err != fnErr {
		t.Fatalf("UpdateBotUser with a failing fn: %v, want its error as it is", err)
	}

	for name, err := range map[string]error{
		"GetBotUser":                   errOf(e.store.GetBotUser(e.ctx, other.ID, b.ID)),
		"UpdateBotUser":                errOf(e.store.UpdateBotUser(e.ctx, other.ID, b.ID, func(*store.BotUser) error { return nil })),
		"DeleteBotUser":                errOf(e.store.DeleteBotUser(e.ctx, other.ID, b.ID)),
		"GetBotUser of a malformed id": errOf(e.store.GetBotUser(e.ctx, account.ID, "bot_*")),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s from another account: %v, want ErrNotFound", name, err)
		}
	}

	deleted, err := e.store.DeleteBotUser(e.ctx, account.ID, b.ID)
	if err != nil || deleted != renamed {
		t.Fatalf("DeleteBotUser = %+v, %v; want %+v", deleted, err, renamed)
	}
	wantErr(t, errOf(e.store.GetBotUser(e.ctx, account.ID, b.ID)), store.ErrNotFound)
	wantErr(t, errOf(e.store.DeleteBotUser(e.ctx, account.ID, b.ID)), store.ErrNotFound)
	if n := countPrefix(e.rawEntries(t), "bot_user"); n != 0 {
		t.Fatalf("%d bot user keys left after the delete, want 0", n)
	}
}

// TestBotUserNamesUniqueIgnoringCase refuses a second bot user of a name
// within the account, ignoring case, at create and at rename, with a
// *TakenError matching ErrConflict; another account may have the name; a
// change of case only is no clash; a rename and a delete free the name.
func TestBotUserNamesUniqueIgnoringCase(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	create := func(accountID, name string) (store.BotUser, error) {
		return e.store.CreateBotUser(e.ctx, accountID, store.BotUser{Name: name})
	}
	first, err := create(account.ID, "Deploy Bot")
	if err != nil {
		t.Fatal(err)
	}
	wantTaken := func(t *testing.T, err error, name string) {
		t.Helper()
		var taken *store.TakenError
		if !errors.As(err, &taken) || taken.Field != "name" || taken.Value != name || !errors.Is(err, store.ErrConflict) {
			t.Fatalf("error = %v, want a *TakenError of name %q matching ErrConflict", err, name)
		}
		if want := `name "` + name + `" is taken by another bot user of the account: choose another name`; err.Error() != want {
			t.Fatalf("error says %q, want %q", err, want)
		}
	}
	_, err = create(account.ID, "deploy BOT")
	wantTaken(t, err, "deploy BOT")
	if _, err := create(other.ID, "deploy bot"); err != nil {
		t.Fatalf("another account's bot user of the name: %v", err)
	}

	second, err := create(account.ID, "Release Bot")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.store.UpdateBotUser(e.ctx, account.ID, second.ID, func(u *store.BotUser) error { u.Name = "DEPLOY bot"; return nil })
	wantTaken(t, err, "DEPLOY bot")
	if got, _ := e.store.GetBotUser(e.ctx, account.ID, second.ID); got.Name != "Release Bot" {
		t.Fatalf("a refused rename changed the name to %q", got.Name)
	}
	if _, err := e.store.UpdateBotUser(e.ctx, account.ID, first.ID, func(u *store.BotUser) error { u.Name = "deploy bot"; return nil }); err != nil {
		t.Fatalf("changing the case of a name: %v", err)
	}

	// A rename frees the old name, a delete its name, and each can be
	// taken again (over the delete markers the index keys leave).
	if _, err := e.store.UpdateBotUser(e.ctx, account.ID, second.ID, func(u *store.BotUser) error { u.Name = "Ops Bot"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := create(account.ID, "release bot"); err != nil {
		t.Fatalf("the name a rename freed: %v", err)
	}
	if _, err := e.store.DeleteBotUser(e.ctx, account.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	again, err := create(account.ID, "Deploy Bot")
	if err != nil {
		t.Fatalf("the name a delete freed: %v", err)
	}
	_, err = create(account.ID, "deploy bot")
	wantTaken(t, err, "deploy bot")
	if _, err := e.store.DeleteBotUser(e.ctx, account.ID, again.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := create(account.ID, "deploy bot"); err != nil {
		t.Fatalf("a name freed twice: %v", err)
	}
}

// TestBotUserNameRules refuses a name that is empty, longer than 255
// bytes, not UTF-8 or with a control character, at create and at update.
func TestBotUserNameRules(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	b, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: strings.Repeat("é", 127) + "x"})
	if err != nil {
		t.Fatalf("a name of 255 bytes: %v", err)
	}
	for _, name := range []string{"", strings.Repeat("x", 256), "bad \xff", "tab\there", "line\nbreak", "del\x7f", "c1\u0085", "deploy\u200b", "rtl\u202eoverride", " deploy", "deploy ", "\u00a0nbsp"} {
		var invalid *store.ValidationError
		err := errOf(e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: name}))
		if !errors.As(err, &invalid) || invalid.Field != "name" || !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateBotUser(%q): %v, want a *ValidationError of name", name, err)
		}
		err = errOf(e.store.UpdateBotUser(e.ctx, account.ID, b.ID, func(u *store.BotUser) error { u.Name = name; return nil }))
		if !errors.As(err, &invalid) || invalid.Field != "name" {
			t.Errorf("UpdateBotUser to %q: %v, want a *ValidationError of name", name, err)
		}
	}
}

// TestBotUserPages lists an account's bot users newest first, a page at a
// time, and refuses a before_id of another kind.
func TestBotUserPages(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	var made []string
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		b, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, b.ID)
	}
	var got []string
	page := store.Page{Limit: 2}
	for pages := 0; ; pages++ {
		items, next, err := e.store.ListBotUsers(e.ctx, account.ID, page)
		if err != nil || pages > 3 {
			t.Fatalf("ListBotUsers(%+v) = %v, %q, %v", page, items, next, err)
		}
		for _, b := range items {
			got = append(got, b.ID)
		}
		if next == "" {
			break
		}
		page.BeforeID = next
	}
	want := []string{made[4], made[3], made[2], made[1], made[0]}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("listed %v, want %v (newest first)", got, want)
	}
	var invalid *store.ValidationError
	if _, _, err := e.store.ListBotUsers(e.ctx, account.ID, store.Page{BeforeID: "ed_2Ed2q8zQnGAqCS4LCCXyqqmNuQK"}); !errors.As(err, &invalid) || invalid.Field != "before_id" {
		t.Fatalf("a before_id of another kind: %v, want a *ValidationError of before_id", err)
	}
	wantErr(t, errOf3(e.store.ListBotUsers(e.ctx, "ac_*", store.Page{})), store.ErrNotFound)
}

// TestBotUserLimit refuses a bot user over Limits.BotUsers with a
// *LimitError, and a delete makes room.
func TestBotUserLimit(t *testing.T) {
	e := newEnvWith(t, store.Config{Limits: store.Limits{BotUsers: 2}})
	account := e.createAccount(t, "team")
	var last store.BotUser
	for _, name := range []string{"a", "b"} {
		var err error
		if last, err = e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	err := errOf(e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "c"}))
	var limit *store.LimitError
	if !errors.As(err, &limit) || limit.Limit != store.LimitBotUsers || limit.Max != 2 || !errors.Is(err, store.ErrLimit) {
		t.Fatalf("over the limit: %v, want a *LimitError of %q, max 2", err, store.LimitBotUsers)
	}
	if _, err := e.store.DeleteBotUser(e.ctx, account.ID, last.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "c"}); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	if store.DefaultMaxBotUsers != 100 {
		t.Fatalf("DefaultMaxBotUsers = %d, want 100 (issue 14)", store.DefaultMaxBotUsers)
	}
}

// TestBotUserConcurrentNames creates one name, in several cases, many
// times at once from two processes, and renames two bot users to one new
// name at once: exactly one of each wins, the others are told the name is
// taken (or, when the limit's claims kept changing, ErrConflict).
func TestBotUserConcurrentNames(t *testing.T) {
	const burst = 12
	e := newEnv(t)
	stores := []*store.Store{e.store, e.openAnother(t)}
	account := e.createAccount(t, "team")

	var (
		mu     sync.Mutex
		won    int
		taken  int
		others []error
		wg     sync.WaitGroup
	)
	for i := range burst {
		wg.Go(func() {
			name := "Same Name"
			if i%2 == 1 {
				name = "same name"
			}
			_, err := stores[i%len(stores)].CreateBotUser(e.ctx, account.ID, store.BotUser{Name: name})
			var takenErr *store.TakenError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.As(err, &takenErr):
				taken++
			case errors.Is(err, store.ErrConflict): // the limit's claims kept changing
			default:
				others = append(others, err)
			}
		})
	}
	wg.Wait()
	if won != 1 || taken == 0 || len(others) > 0 {
		t.Fatalf("%d of %d creates of one name won, %d were told it is taken, other errors %v; want exactly one, the others taken", won, burst, taken, others)
	}

	a, errA := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "a"})
	b, errB := e.store.CreateBotUser(e.ctx, account.ID, store.BotUser{Name: "b"})
	if err := errors.Join(errA, errB); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	for i, id := range []string{a.ID, b.ID} {
		wg.Go(func() {
			_, errs[i] = stores[i].UpdateBotUser(e.ctx, account.ID, id, func(u *store.BotUser) error { u.Name = "New Name"; return nil })
		})
	}
	wg.Wait()
	var takenErr *store.TakenError
	if (errs[0] == nil) == (errs[1] == nil) || !errors.As(errors.Join(errs...), &takenErr) {
		t.Fatalf("concurrent renames to one name: %v; want one to win, the other taken", errs)
	}
	users, _, err := e.store.ListBotUsers(e.ctx, account.ID, store.Page{})
	if err != nil || len(users) != 3 {
		t.Fatalf("ListBotUsers = %d, %v; want 3", len(users), err)
	}
	if n := countPrefix(e.rawEntries(t), "bot_user_names."+account.ID+"."); n != 3 {
		t.Fatalf("%d name index keys, want 3", n)
	}
}

// countPrefix counts the keys of raw that start with prefix.
func countPrefix(raw map[string]string, prefix string) int {
	n := 0
	for key := range raw {
		if strings.HasPrefix(key, prefix) {
			n++
		}
	}
	return n
}

func errOf3[T, U any](_ T, _ U, err error) error { return err }
