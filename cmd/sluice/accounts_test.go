package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natsserver"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
)

// runAccountsCommand runs `sluice accounts` with the arguments, in process,
// and returns its standard output and error and its error.
func runAccountsCommand(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"accounts"}, args...))
	err = cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

// startStore starts a NATS server with the store's bucket, as sluice serve
// leaves it, and returns its URL, the seed file of sluice's identity on it
// and the store.
func startStore(t *testing.T) (url, seed string, st *store.Store) {
	t.Helper()
	srv := natstest.Start(t)
	_, js := natstest.Connect(t, srv)
	st, err := store.Open(t.Context(), js, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return srv.ClientURL(), srv.SeedFile(natsserver.IdentitySluice), st
}

func TestAccountsCreateAndList(t *testing.T) {
	url, seed, st := startStore(t)
	ctx := t.Context()

	// The first in a table, the second as JSON.
	out, _, err := runAccountsCommand(t, "create", "--name", "acme", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	if !strings.Contains(out, tokenShownOnce) {
		t.Errorf("create printed no warning that the token is shown once:\n%s", out)
	}
	fields := strings.Fields(out)
	first := createdAccount{AccountID: fields[4], Name: fields[5], APIKeyID: fields[6], Token: fields[len(fields)-1]}
	if first.Name != "acme" || !strings.HasPrefix(first.AccountID, "ac_") || !strings.HasPrefix(first.APIKeyID, "ak_") {
		t.Fatalf("create printed:\n%s", out)
	}

	out, errOut, err := runAccountsCommand(t, "create", "--name", "globex", "--description", "ops key", "--json", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	if !strings.Contains(errOut, "shown only this once") {
		t.Errorf("create --json printed no warning on stderr: %q", errOut)
	}
	var second createdAccount
	if err := json.Unmarshal([]byte(out), &second); err != nil {
		t.Fatalf("create --json printed %q: %v", out, err)
	}

	for _, c := range []struct {
		created     createdAccount
		description string
	}{{first, "first key of acme"}, {second, "ops key"}} {
		key, err := st.Authenticate(ctx, c.created.Token)
		if err != nil {
			t.Fatalf("token of %s: %v", c.created.Name, err)
		}
		if key.AccountID != c.created.AccountID || key.ID != c.created.APIKeyID || key.Description != c.description {
			t.Errorf("token of %s is key %s of %s (%q), want %s of %s (%q)",
				c.created.Name, key.ID, key.AccountID, key.Description, c.created.APIKeyID, c.created.AccountID, c.description)
		}
	}

	out, _, err = runAccountsCommand(t, "list", "--json", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	var listed []store.Account
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("list --json printed %q: %v", out, err)
	}
	if len(listed) != 2 || listed[0].ID != second.AccountID || listed[1].ID != first.AccountID {
		t.Errorf("list = %+v, want %s then %s", listed, second.AccountID, first.AccountID)
	}

	out, _, err = runAccountsCommand(t, "list", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], second.AccountID) || !strings.HasPrefix(lines[2], first.AccountID) {
		t.Errorf("list printed:\n%s", out)
	}
}

// TestAccountsCreateRefusesTakenName refuses a second account of a name,
// in any case, saying which account has it.
func TestAccountsCreateRefusesTakenName(t *testing.T) {
	url, seed, st := startStore(t)
	out, _, err := runAccountsCommand(t, "create", "--name", "team-a", "--json", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	var first createdAccount
	if err := json.Unmarshal([]byte(out), &first); err != nil {
		t.Fatalf("create --json printed %q: %v", out, err)
	}
	for _, name := range []string{"team-a", "Team-A"} {
		out, _, err := runAccountsCommand(t, "create", "--name", name, "--nats-url", url, "--nats-nkey", seed)
		check.ErrorContains(t, err, "exists already")
		for _, want := range []string{first.AccountID, "names are unique, ignoring case", "sluice accounts add-key --account " + first.AccountID} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("create --name %s: error %q does not say %q", name, err, want)
			}
		}
		if strings.Contains(out, tokenShownOnce) {
			t.Errorf("create --name %s of a taken name printed a token:\n%s", name, out)
		}
	}
	accounts, err := st.ListAccounts(t.Context())
	if err != nil || len(accounts) != 1 {
		t.Fatalf("ListAccounts = %+v, %v; want only %s", accounts, err, first.AccountID)
	}
}

func TestAccountsAddKey(t *testing.T) {
	url, seed, st := startStore(t)
	ctx := t.Context()
	account, err := st.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runAccountsCommand(t, "add-key", "--account", account.ID, "--json", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	if !strings.Contains(errOut, "shown only this once") {
		t.Errorf("add-key --json printed no warning on stderr: %q", errOut)
	}
	var added createdAccount
	if err := json.Unmarshal([]byte(out), &added); err != nil {
		t.Fatalf("add-key --json printed %q: %v", out, err)
	}
	key, err := st.Authenticate(ctx, added.Token)
	if err != nil || key.AccountID != account.ID || key.ID != added.APIKeyID || key.Description != "added by an operator" {
		t.Fatalf("the added token is %+v, %v; want a key of %s", key, err, account.ID)
	}

	_, _, err = runAccountsCommand(t, "add-key", "--account", "ac_3MS9bUONRqhCXceujBwuUPwZFZ4", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "there is no account")
	_, _, err = runAccountsCommand(t, "add-key", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "--account is empty")
}

func TestAccountsErrors(t *testing.T) {
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "nats://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	bare := natstest.Start(t) // no bucket: sluice serve never ran on it
	bareSeed := bare.SeedFile(natsserver.IdentitySluice)
	otherSeed := natstest.Start(t).SeedFile(natsserver.IdentitySluice)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unreachable", []string{"list", "--nats-url", closedURL}, "is sluice serve running with --nats-listen 127.0.0.1:4222, or give --nats-url"},
		{"no bucket", []string{"list", "--nats-url", bare.ClientURL(), "--nats-nkey", bareSeed}, "start sluice serve on it first"},
		{"no name", []string{"create", "--nats-url", bare.ClientURL(), "--nats-nkey", bareSeed}, "--name is empty"},
		// The embedded server takes no client without credentials.
		{"no credentials", []string{"list", "--nats-url", bare.ClientURL()}, "give --nats-nkey DATA_DIR/nats/sluice.nk"},
		{"another server's seed", []string{"list", "--nats-url", bare.ClientURL(), "--nats-nkey", otherSeed}, "give --nats-nkey DATA_DIR/nats/sluice.nk"},
		{"no seed file", []string{"list", "--nats-url", bare.ClientURL(), "--nats-nkey", "missing.nk"}, "--nats-nkey missing.nk"},
		{"creds and nkey", []string{"list", "--nats-creds", "u.creds", "--nats-nkey", bareSeed}, "give one of them"},
		{"cert without key", []string{"list", "--nats-tls-cert", "c.pem"}, "--nats-tls-cert needs --nats-tls-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := runAccountsCommand(t, tc.args...)
			check.ErrorContains(t, err, tc.want)
			if elapsed := time.Since(start); elapsed > accountsConnectTimeout+time.Second {
				t.Errorf("failing took %s, more than the connect timeout %s", elapsed, accountsConnectTimeout)
			}
		})
	}
	// accounts never creates the bucket: serve does, with its replicas.
	_, js := natstest.Connect(t, bare)
	if _, err := js.KeyValue(t.Context(), store.Bucket); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("bucket %s after accounts ran on a bare server: %v, want it not found", store.Bucket, err)
	}
}

// TestAccountsCreateQuiet checks that accounts create -q prints the new
// account's id and then its first key's token, a line each, and nothing
// else: the token is shown only this once.
func TestAccountsCreateQuiet(t *testing.T) {
	url, seed, st := startStore(t)
	out, errOut, err := runAccountsCommand(t, "create", "--name", "acme", "-q", "--nats-url", url, "--nats-nkey", seed)
	check.ErrorContains(t, err, "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ac_") || errOut != "" {
		t.Fatalf("create -q printed %q and %q on stderr, want the account id and the token, a line each", out, errOut)
	}
	key, err := st.Authenticate(t.Context(), lines[1])
	if err != nil || key.AccountID != lines[0] {
		t.Fatalf("the token printed is of %+v (%v), want a key of %s", key, err, lines[0])
	}
}
