package store_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// checkBootstrapped checks that res created a working key of a "default"
// account, with the token wanted ("" for any generated one).
func checkBootstrapped(t *testing.T, e env, res store.BootstrapResult, wantToken string) {
	t.Helper()
	if !res.Created {
		t.Fatal("Bootstrap created nothing on an empty store")
	}
	if res.Account.Name != store.BootstrapAccountName || res.Key.AccountID != res.Account.ID {
		t.Fatalf("Bootstrap result = %+v", res)
	}
	if wantToken != "" && res.Key.Token != wantToken {
		t.Fatalf("Token = %q, want %q", res.Key.Token, wantToken)
	}
	if wantToken == "" && !strings.HasPrefix(res.Key.Token, store.TokenPrefix) {
		t.Fatalf("Token = %q, want a generated one", res.Key.Token)
	}
	key, err := e.store.Authenticate(e.ctx, res.Key.Token)
	if err != nil {
		t.Fatalf("Authenticate with the bootstrap token: %v", err)
	}
	if key.ID != res.Key.ID {
		t.Fatalf("Authenticate returned key %s, want %s", key.ID, res.Key.ID)
	}
}

func countAccounts(t *testing.T, e env) int {
	t.Helper()
	accounts, err := e.store.ListAccounts(e.ctx)
	if err != nil {
		t.Fatalf("ListAccounts: %v", err)
	}
	return len(accounts)
}

func TestBootstrap(t *testing.T) {
	tests := []struct {
		name  string
		token string
	}{
		{name: "token from the environment", token: "sk_from_environment_0123456789"},
		{name: "generated token", token: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			res, err := e.store.Bootstrap(e.ctx, tt.token)
			if err != nil {
				t.Fatalf("Bootstrap: %v", err)
			}
			checkBootstrapped(t, e, res, tt.token)

			again, err := e.store.Bootstrap(e.ctx, tt.token)
			if err != nil {
				t.Fatalf("second Bootstrap: %v", err)
			}
			if again.Created || again.Key.Token != "" {
				t.Fatalf("second Bootstrap = %+v, want nothing created", again)
			}
			if n := countAccounts(t, e); n != 1 {
				t.Fatalf("store holds %d accounts, want 1", n)
			}
		})
	}
}

func TestBootstrapWithExistingKey(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	if _, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, ""); err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	res, err := e.store.Bootstrap(e.ctx, "sk_from_environment_0123456789")
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	if res.Created {
		t.Fatalf("Bootstrap created %+v although a key exists", res)
	}
	if _, err := e.store.Authenticate(e.ctx, "sk_from_environment_0123456789"); err == nil {
		t.Fatal("the bootstrap token authenticates although Bootstrap created nothing")
	}
	if n := countAccounts(t, e); n != 1 {
		t.Fatalf("store holds %d accounts, want 1", n)
	}
}

func TestBootstrapRejectsWeakToken(t *testing.T) {
	e := newEnv(t)
	_, err := e.store.Bootstrap(e.ctx, "secret")
	wantErr(t, err, store.ErrInvalid)
	if n := countAccounts(t, e); n != 0 {
		t.Fatalf("store holds %d accounts, want 0", n)
	}
}

func TestBootstrapConcurrent(t *testing.T) {
	const processes = 4
	e := newEnv(t)
	stores := make([]*store.Store, processes)
	for i := range stores {
		stores[i] = e.openAnother(t)
	}

	results := make([]store.BootstrapResult, processes)
	errs := make([]error, processes)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			<-start
			results[i], errs[i] = s.Bootstrap(e.ctx, "")
		})
	}
	close(start)
	wg.Wait()

	var created []store.BootstrapResult
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("Bootstrap %d: %v", i, errs[i])
		}
		if res.Created {
			created = append(created, res)
		}
	}
	if len(created) != 1 {
		t.Fatalf("%d of %d concurrent Bootstraps created an account, want 1", len(created), processes)
	}
	checkBootstrapped(t, e, created[0], "")
	if n := countAccounts(t, e); n != 1 {
		t.Fatalf("store holds %d accounts, want 1", n)
	}
}

func TestBootstrapClaim(t *testing.T) {
	tests := []struct {
		name        string
		claimedAt   time.Time
		wantCreated bool
	}{
		{name: "fresh claim of another process", claimedAt: time.Now(), wantCreated: false},
		{name: "stale claim of a process that died", claimedAt: time.Now().Add(-time.Hour), wantCreated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			claim := `{"claimed_at":"` + tt.claimedAt.UTC().Format(time.RFC3339Nano) + `"}`
			if _, err := e.kv.Create(e.ctx, "bootstrap", []byte(claim)); err != nil {
				t.Fatalf("writing claim: %v", err)
			}
			res, err := e.store.Bootstrap(e.ctx, "")
			if err != nil {
				t.Fatalf("Bootstrap: %v", err)
			}
			if res.Created != tt.wantCreated {
				t.Fatalf("Bootstrap Created = %v, want %v", res.Created, tt.wantCreated)
			}
			if tt.wantCreated {
				checkBootstrapped(t, e, res, "")
			}
		})
	}
}

// TestBootstrapAfterUnfinishedKey leaves a token index entry without its
// key record, as a crash inside CreateAPIKey does: the store has no usable
// key, so Bootstrap must still create one, even with the same token.
func TestBootstrapAfterUnfinishedKey(t *testing.T) {
	const bootstrapToken = "sk_from_environment_0123456789"
	tests := []struct {
		name        string
		orphanToken string // the token whose index is left behind
		token       string // given to Bootstrap
	}{
		{name: "another key's index", orphanToken: "sk_never_finished_0123456789", token: ""},
		{name: "an unfinished bootstrap with the same token", orphanToken: bootstrapToken, token: bootstrapToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			index := `{"account_id":"ac_2pN5uJ0cV1fBq8Ty3LwR7sKzXeD","api_key_id":"ak_2pN8GnlY3vWQbU4s6ZK0mXoJdHa"}`
			if _, err := e.kv.Create(e.ctx, "api_key_hashes."+sha256Hex(tt.orphanToken), []byte(index)); err != nil {
				t.Fatalf("writing the orphan index: %v", err)
			}
			res, err := e.store.Bootstrap(e.ctx, tt.token)
			if err != nil {
				t.Fatalf("Bootstrap: %v", err)
			}
			checkBootstrapped(t, e, res, tt.token)
		})
	}
}

// TestBootstrapAfterUnfinishedAccount leaves the "default" account
// without a key, as a bootstrap that died between the two does: Bootstrap
// gives that account its key rather than failing on the taken name or
// making a second "default".
func TestBootstrapAfterUnfinishedAccount(t *testing.T) {
	e := newEnv(t)
	left := e.createAccount(t, store.BootstrapAccountName)
	res, err := e.store.Bootstrap(e.ctx, "")
	if err != nil {
		t.Fatalf("Bootstrap: %v", err)
	}
	checkBootstrapped(t, e, res, "")
	if res.Account != left {
		t.Fatalf("Bootstrap used account %+v, want the one left, %+v", res.Account, left)
	}
	if n := countAccounts(t, e); n != 1 {
		t.Fatalf("store holds %d accounts, want 1", n)
	}
}
