package natsserver_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natsserver"
)

// secret is what the tests store and then look for in the data dir's files.
const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

// storeSecret starts a server on dir with key, stores secret in stream
// SECRETS (and in a key-value bucket, as sluice keeps credentials), and
// shuts the server down, which writes everything to the files.
func storeSecret(ctx context.Context, t *testing.T, dir, key string) {
	t.Helper()
	srv, err := natsserver.Start(natsserver.Config{DataDir: dir, Key: key})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer srv.Shutdown()
	js := connectJS(t, srv)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SECRETS", Subjects: []string{"secrets.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	if _, err := js.Publish(ctx, "secrets.one", []byte(secret)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "CREDS", Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatalf("CreateKeyValue: %v", err)
	}
	if _, err := kv.Put(ctx, "destination", []byte(`{"aws_secret_access_key":"`+secret+`"}`)); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

// readSecret starts a server on dir with key and reads the secret back.
func readSecret(ctx context.Context, t *testing.T, dir, key string) {
	t.Helper()
	srv := startServer(t, natsserver.Config{DataDir: dir, Key: key})
	defer srv.Shutdown()
	js := connectJS(t, srv)
	stream, err := js.Stream(ctx, "SECRETS")
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, "secrets.one")
	if err != nil || string(msg.Data) != secret {
		t.Fatalf("reading the secret back: %v", err)
	}
	kv, err := js.KeyValue(ctx, "CREDS")
	if err != nil {
		t.Fatalf("KeyValue: %v", err)
	}
	if entry, err := kv.Get(ctx, "destination"); err != nil || !bytes.Contains(entry.Value(), []byte(secret)) {
		t.Fatalf("reading the credentials back: %v", err)
	}
}

func connectJS(t *testing.T, srv *natsserver.Server) jetstream.JetStream {
	t.Helper()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	return js
}

// filesHolding returns the files under dir whose bytes hold s.
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
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestEncryptionAtRest stores a secret with and without a key: without,
// the files of the data dir hold it in clear (which is why the key
// matters); with one, no file holds it, the same key reads it back after a
// restart, and another key or none is refused with ErrWrongKey.
func TestEncryptionAtRest(t *testing.T) {
	ctx := testContext(t)
	const key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

	plain := t.TempDir()
	storeSecret(ctx, t, plain, "")
	if len(filesHolding(t, plain, secret)) == 0 {
		t.Fatal("without a key, no file holds the secret: the test cannot tell encryption from its absence")
	}

	encrypted := t.TempDir()
	storeSecret(ctx, t, encrypted, key)
	if files := filesHolding(t, encrypted, secret); len(files) > 0 {
		t.Errorf("with a key, files %v hold the secret in clear", files)
	}
	if files := filesHolding(t, encrypted, key); len(files) > 0 {
		t.Errorf("files %v hold the key itself", files)
	}
	readSecret(ctx, t, encrypted, key)

	for _, tt := range []struct{ name, key, wantErr string }{
		{"another key", strings.Repeat("x", 64), "was encrypted with another key"},
		{"no key", "", "is encrypted, and no key was given"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := natsserver.Start(natsserver.Config{DataDir: encrypted, Key: tt.key})
			if err == nil {
				srv.Shutdown()
			}
			if !errors.Is(err, natsserver.ErrWrongKey) {
				t.Fatalf("Start: %v, want ErrWrongKey", err)
			}
			check.ErrorContains(t, err, tt.wantErr)
		})
	}

	// Without its check file, a wrong key still shows: the server cannot
	// load the encrypted streams.
	if err := os.Remove(filepath.Join(encrypted, "data-key.check")); err != nil {
		t.Fatal(err)
	}
	srv, err := natsserver.Start(natsserver.Config{DataDir: encrypted, Key: strings.Repeat("y", 64)})
	if err == nil {
		srv.Shutdown()
	}
	if !errors.Is(err, natsserver.ErrWrongKey) {
		t.Fatalf("Start with another key and no check file: %v, want ErrWrongKey", err)
	}
	check.ErrorContains(t, err, "cannot be decrypted with the key given")
	readSecret(ctx, t, encrypted, key)
}

// TestEncryptionOfAnExistingStore starts with a key on a store written
// without one: the server encrypts it, and its files no longer hold the
// secret.
func TestEncryptionOfAnExistingStore(t *testing.T) {
	ctx := testContext(t)
	const key = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	dir := t.TempDir()
	storeSecret(ctx, t, dir, "")
	readSecret(ctx, t, dir, key)
	if files := filesHolding(t, dir, secret); len(files) > 0 {
		t.Errorf("after a start with a key, files %v still hold the secret in clear", files)
	}
	readSecret(ctx, t, dir, key)
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return path
	}
	good := strings.Repeat("k", natsserver.MinKeyLength)
	tests := []struct {
		name, path, want, wantErr string
	}{
		{name: "key and newline", path: write("good", good+"\n", 0o600), want: good},
		{name: "read-only", path: write("readonly", good, 0o400), want: good},
		{name: "missing", path: filepath.Join(dir, "missing"), wantErr: "no such file"},
		{name: "others may read it", path: write("open", good, 0o644), wantErr: "others than its owner can reach it; run chmod 600"},
		{name: "too short", path: write("short", "secret\n", 0o600), wantErr: "holds 6 bytes, fewer than 32"},
		{name: "empty", path: write("empty", "\n", 0o600), wantErr: "holds 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := natsserver.ReadKeyFile(tt.path)
			check.ErrorContains(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("key %q, want %q", got, tt.want)
			}
		})
	}
}
