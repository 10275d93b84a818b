package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filesHolding returns the files under dir, relative to it, whose bytes
// hold s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(raw, []byte(s)) {
			rel, _ := filepath.Rel(dir, path)
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// credsDestination is the body of a destination with static credentials
// whose secret access key is secret.
func credsDestination(secret string) string {
	return `{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/keys", "auth": {"creds": {"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key": "` + secret + `"}}}}}`
}

// storeSecrets runs serve on dataDir with the environment env, creates a
// destination with the secret access key first, replaces it with second,
// and stops serve, which writes everything to the files. It returns the
// destination's id.
func storeSecrets(t *testing.T, bin, dataDir, first, second string, env ...string) string {
	t.Helper()
	const token = "sk_test_data_key_token_0123456789"
	p := startServe(t, bin, dataDir, append(env, bootstrapKeyEnv+"="+token)...)
	waitReady(t, p.url)
	status, body := request(t, http.MethodPost, p.url+"/event_destinations", token, credsDestination(first))
	var dest struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal([]byte(body), &dest) != nil {
		t.Fatalf("creating a destination: %d %s", status, body)
	}
	if status, body := request(t, http.MethodPatch, p.url+"/event_destinations/"+dest.ID, token, credsDestination(second)); status != http.StatusOK {
		t.Fatalf("replacing its secret: %d %s", status, body)
	}
	p.stop(t)
	return dest.ID
}

// TestServeDataKey stores a destination's AWS secret access key, and
// replaces it, with and without --data-key-file: without, the key-value
// files of the data dir hold the secret in clear (and nothing else does:
// not the audit events, dead letters or status); with it, no file holds
// either secret, a restart with the same key reads the destination back,
// and another key stops serve with an error saying so.
func TestServeDataKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildSluice(t)
	const first, second = "firstSecretKey/0123456789abcdefghijklmnopq", "secondSecretKey/0123456789abcdefghijklmnop"

	plain := t.TempDir()
	storeSecrets(t, bin, plain, first, second)
	files := filesHolding(t, plain, second)
	if len(files) == 0 {
		t.Fatal("without --data-key-file, no file holds the secret: the test cannot tell encryption from its absence")
	}
	for _, f := range files {
		if !strings.Contains(f, "KV_SLUICE_STORE") {
			t.Errorf("without --data-key-file, %s holds the secret: only the store's bucket should", f)
		}
	}
	t.Logf("without --data-key-file, the current secret is in %v, the replaced one in %v", files, filesHolding(t, plain, first))

	keys := t.TempDir()
	keyFile := filepath.Join(keys, "data.key")
	if err := os.WriteFile(keyFile, []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	encrypted := t.TempDir()
	id := storeSecrets(t, bin, encrypted, first, second, "SLUICE_DATA_KEY_FILE="+keyFile)
	for _, secret := range []string{first, second} {
		if files := filesHolding(t, encrypted, secret); len(files) > 0 {
			t.Errorf("with --data-key-file, %v hold a secret in clear", files)
		}
	}

	const token = "sk_test_data_key_token_0123456789"
	p := startServe(t, bin, encrypted, "SLUICE_DATA_KEY_FILE="+keyFile)
	if status, body := request(t, http.MethodGet, p.url+"/event_destinations/"+id, token, ""); status != http.StatusOK {
		t.Errorf("reading the destination back with the same key: %d %s", status, body)
	}
	p.stop(t)

	wrongKey := filepath.Join(keys, "wrong.key")
	if err := os.WriteFile(wrongKey, []byte(strings.Repeat("f", 64)), 0o600); err != nil {
		t.Fatal(err)
	}
	clearSluiceEnv(t)
	for _, tt := range []struct{ name, keyFile, wantErr string }{
		{"another key", wrongKey, "wrong encryption key: the store in " + encrypted + " was encrypted with another key"},
		{"no key", "", "wrong encryption key: the store in " + encrypted + " is encrypted, and no key was given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runSluice(t, "", "serve", "--data-dir", encrypted, "--data-key-file", tt.keyFile, "--http", "127.0.0.1:0", "--metrics-http", "127.0.0.1:0")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("sluice serve: %v, want an error containing %q\n%s", err, tt.wantErr, stderr)
			}
		})
	}
}
