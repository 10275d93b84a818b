package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestNewAPIKeyToken(t *testing.T) {
	const n = 1000
	seen := make(map[string]bool, n)
	for range n {
		token, err := store.NewAPIKeyToken()
		if err != nil {
			t.Fatalf("NewAPIKeyToken: %v", err)
		}
		digits, ok := strings.CutPrefix(token, store.TokenPrefix)
		if !ok || len(digits) != 43 {
			t.Fatalf("token %q is not %q and 43 digits", token, store.TokenPrefix)
		}
		if strings.Trim(digits, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("token %q has characters outside base62", token)
		}
		if seen[token] {
			t.Fatalf("token %q generated twice", token)
		}
		seen[token] = true
	}
}

func TestCreateAPIKey(t *testing.T) {
	tests := []struct {
		name  string
		in    store.APIKeyInput
		token string
	}{
		{name: "generated token", in: store.APIKeyInput{Description: "ci", Metadata: `{"team":"ops"}`}},
		{name: "given token", in: store.APIKeyInput{Description: "from env"}, token: "given-token-0123456789"},
		{name: "longest description and metadata", in: store.APIKeyInput{
			Description: strings.Repeat("d", store.MaxDescription),
			Metadata:    strings.Repeat("m", store.MaxMetadata),
		}},
	}
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := e.store.CreateAPIKey(e.ctx, account.ID, tt.in, tt.token)
			if err != nil {
				t.Fatalf("CreateAPIKey: %v", err)
			}
			if err := schemas.CheckID(schemas.PrefixAPIKey, key.ID); err != nil {
				t.Fatalf("key id: %v", err)
			}
			if tt.token != "" && key.Token != tt.token {
				t.Fatalf("Token = %q, want the given %q", key.Token, tt.token)
			}
			if tt.token == "" && !strings.HasPrefix(key.Token, store.TokenPrefix) {
				t.Fatalf("Token = %q, want a generated one", key.Token)
			}
			if key.AccountID != account.ID || key.Description != tt.in.Description ||
				key.Metadata != tt.in.Metadata || key.CreatedAt.IsZero() {
				t.Fatalf("key = %+v", key)
			}
			if key.TokenHash != sha256Hex(key.Token) {
				t.Fatalf("TokenHash = %q, want the hex SHA-256 of the token", key.TokenHash)
			}

			got, err := e.store.Authenticate(e.ctx, key.Token)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			want := key
			want.Token = ""
			if got != want {
				t.Fatalf("Authenticate = %+v, want %+v", got, want)
			}
		})
	}
}

func TestCreateAPIKeyErrors(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	const taken = "taken-token-0123456789"
	if _, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, taken); err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	other := e.createAccount(t, "other")

	tests := []struct {
		name      string
		accountID string
		in        store.APIKeyInput
		token     string
		wantErr   error
	}{
		{name: "unknown account", accountID: schemas.NewID(schemas.PrefixAccount), wantErr: store.ErrNotFound},
		{name: "malformed account id", accountID: "ac_x.*", wantErr: store.ErrNotFound},
		{name: "description too long", accountID: account.ID,
			in: store.APIKeyInput{Description: strings.Repeat("d", store.MaxDescription+1)}, wantErr: store.ErrInvalid},
		{name: "metadata too long", accountID: account.ID,
			in: store.APIKeyInput{Metadata: strings.Repeat("m", store.MaxMetadata+1)}, wantErr: store.ErrInvalid},
		{name: "token too short", accountID: account.ID, token: "short", wantErr: store.ErrInvalid},
		{name: "token with a space", accountID: account.ID, token: "has a space 0123456789", wantErr: store.ErrInvalid},
		{name: "same token, same account", accountID: account.ID, token: taken, wantErr: store.ErrConflict},
		{name: "same token, other account", accountID: other.ID, token: taken, wantErr: store.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.store.CreateAPIKey(e.ctx, tt.accountID, tt.in, tt.token)
			wantErr(t, err, tt.wantErr)
		})
	}

	// The rejected duplicate left the first key working and wrote nothing.
	key, err := e.store.Authenticate(e.ctx, taken)
	if err != nil || key.AccountID != account.ID {
		t.Fatalf("Authenticate(taken) = %+v, %v; want the first key", key, err)
	}
	var records int
	for k := range e.rawEntries(t) {
		if strings.HasPrefix(k, "api_keys.") {
			records++
		}
	}
	if records != 1 {
		t.Fatalf("bucket holds %d api key records, want 1", records)
	}
}

func TestAuthenticate(t *testing.T) {
	tests := []struct {
		name string
		// token returns the token to present, given a key just created.
		token   func(key store.APIKey) string
		deleted func(key store.APIKey) []string // raw keys deleted first
		wantErr error
	}{
		{name: "good token", token: func(k store.APIKey) string { return k.Token }},
		{name: "other token", token: func(store.APIKey) string { return "sk_doesnotexist0123456789" }, wantErr: store.ErrUnauthenticated},
		{name: "empty token", token: func(store.APIKey) string { return "" }, wantErr: store.ErrUnauthenticated},
		{name: "token hash as token", token: func(k store.APIKey) string { return k.TokenHash }, wantErr: store.ErrUnauthenticated},
		{name: "overlong token", token: func(k store.APIKey) string { return strings.Repeat(k.Token, 10) }, wantErr: store.ErrUnauthenticated},
		{
			name:    "key record deleted",
			token:   func(k store.APIKey) string { return k.Token },
			deleted: func(k store.APIKey) []string { return []string{"api_keys." + k.AccountID + "." + k.ID} },
			wantErr: store.ErrUnauthenticated,
		},
		{
			name:    "token index deleted",
			token:   func(k store.APIKey) string { return k.Token },
			deleted: func(k store.APIKey) []string { return []string{"api_key_hashes." + k.TokenHash} },
			wantErr: store.ErrUnauthenticated,
		},
	}
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{Description: tt.name}, "")
			if err != nil {
				t.Fatalf("CreateAPIKey: %v", err)
			}
			if tt.deleted != nil {
				for _, k := range tt.deleted(key) {
					if err := e.kv.Delete(e.ctx, k); err != nil {
						t.Fatalf("Delete(%s): %v", k, err)
					}
				}
			}
			got, err := e.store.Authenticate(e.ctx, tt.token(key))
			wantErr(t, err, tt.wantErr)
			if tt.wantErr == nil && got.ID != key.ID {
				t.Fatalf("Authenticate returned key %s, want %s", got.ID, key.ID)
			}
			if got.Token != "" {
				t.Fatalf("Authenticate returned a token")
			}
		})
	}
}

func TestTokenNeverStored(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	generated, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	given, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{}, "operator-chosen-token-42")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}

	entries := e.rawEntries(t)
	for _, key := range []store.APIKey{generated, given} {
		record := entries["api_keys."+account.ID+"."+key.ID]
		if !strings.Contains(record, `"token_hash":"`+sha256Hex(key.Token)+`"`) {
			t.Fatalf("record of %s lacks its token hash: %s", key.ID, record)
		}
		if strings.Contains(record, `"token":`) {
			t.Fatalf("record of %s has a token field: %s", key.ID, record)
		}
		if _, ok := entries["api_key_hashes."+sha256Hex(key.Token)]; !ok {
			t.Fatalf("no token index for %s", key.ID)
		}
		for k, v := range entries {
			if strings.Contains(k, key.Token) || strings.Contains(v, key.Token) {
				t.Fatalf("token of %s stored in plain text under %s", key.ID, k)
			}
		}
	}
}

// TestAPIKeyNeverShowsToken checks that neither JSON nor slog shows a key's
// token or token hash.
func TestAPIKeyNeverShowsToken(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	key, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{Description: "ci"}, "")
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	if key.Token == "" || key.TokenHash == "" {
		t.Fatalf("CreateAPIKey returned no token or hash: id %s", key.ID)
	}
	encoded, err := json.Marshal(key)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	var logged bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logged, nil))
	logger.Info("created", "key", key)
	logger.Info("created", slog.Any("key", &key))
	logger.Info("created", slog.Group("nested", "key", key))
	for name, out := range map[string]string{"json.Marshal": string(encoded), "slog": logged.String()} {
		for _, secret := range []string{key.Token, key.TokenHash} {
			if strings.Contains(out, secret) {
				t.Errorf("%s shows the token or its hash:\n%s", name, out)
			}
		}
		if strings.Contains(out, "token") {
			t.Errorf("%s has a token field:\n%s", name, out)
		}
		if !strings.Contains(out, key.ID) {
			t.Errorf("%s does not show the key's id:\n%s", name, out)
		}
	}
}

func TestAPIKeyLifecycle(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "acme")
	first, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{Description: "first"}, "")
	if err != nil {
		t.Fatal(err)
	}
	// The only key of the account cannot go.
	wantErr(t, errOf(e.store.DeleteAPIKey(e.ctx, account.ID, first.ID)), store.ErrLastAPIKey)
	second, err := e.store.CreateAPIKey(e.ctx, account.ID, store.APIKeyInput{Description: "second", Metadata: "m"}, "")
	if err != nil {
		t.Fatal(err)
	}

	got, err := e.store.GetAPIKey(e.ctx, account.ID, second.ID)
	if err != nil {
		t.Fatalf("GetAPIKey: %v", err)
	}
	if got.ID != second.ID || got.Description != "second" || got.Metadata != "m" || got.Token != "" || got.TokenHash != sha256Hex(second.Token) {
		t.Fatalf("GetAPIKey = %+v, want the second key without its token", got)
	}
	// Newest first is by id; two keys made within a second order by the
	// random part of their KSUIDs.
	newer, older := second, first
	if first.ID > second.ID {
		newer, older = first, second
	}
	keys, next, err := e.store.ListAPIKeys(e.ctx, account.ID, store.Page{Limit: 1})
	if err != nil || len(keys) != 1 || keys[0].ID != newer.ID || next != newer.ID {
		t.Fatalf("ListAPIKeys(limit 1) = %+v, %q, %v; want the newest key and a next page", keys, next, err)
	}
	keys, next, err = e.store.ListAPIKeys(e.ctx, account.ID, store.Page{Limit: 1, BeforeID: next})
	if err != nil || len(keys) != 1 || keys[0].ID != older.ID || next != "" {
		t.Fatalf("ListAPIKeys(second page) = %+v, %q, %v; want the older key, last page", keys, next, err)
	}

	updated, err := e.store.UpdateAPIKey(e.ctx, account.ID, second.ID, func(k *store.APIKey) error {
		k.Description = "renamed"
		k.TokenHash = "forged" // not the caller's to change
		return nil
	})
	if err != nil || updated.Description != "renamed" || updated.Metadata != "m" {
		t.Fatalf("UpdateAPIKey = %+v, %v; want the description changed, metadata kept", updated, err)
	}
	if _, err := e.store.Authenticate(e.ctx, second.Token); err != nil {
		t.Fatalf("the token stopped working after an update: %v", err)
	}
	_, err = e.store.UpdateAPIKey(e.ctx, account.ID, second.ID, func(k *store.APIKey) error {
		k.Metadata = strings.Repeat("m", store.MaxMetadata+1)
		return nil
	})
	wantInvalid(t, err, "metadata")

	deleted, err := e.store.DeleteAPIKey(e.ctx, account.ID, second.ID)
	if err != nil || deleted.ID != second.ID || deleted.Description != "renamed" {
		t.Fatalf("DeleteAPIKey = %+v, %v; want the key as it was", deleted, err)
	}
	wantErr(t, errOf(e.store.Authenticate(e.ctx, second.Token)), store.ErrUnauthenticated)
	wantErr(t, errOf(e.store.GetAPIKey(e.ctx, account.ID, second.ID)), store.ErrNotFound)
	wantErr(t, errOf(e.store.DeleteAPIKey(e.ctx, account.ID, second.ID)), store.ErrNotFound)
	if _, ok := e.rawEntries(t)["api_key_hashes."+sha256Hex(second.Token)]; ok {
		t.Errorf("the token index of the deleted key is still stored")
	}
	if _, err := e.store.Authenticate(e.ctx, first.Token); err != nil {
		t.Fatalf("the other key stopped working: %v", err)
	}
}
