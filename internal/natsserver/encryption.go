package natsserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// ErrWrongKey is returned by Start when the store in the data dir was
// encrypted with another key than Config.Key, or is encrypted and
// Config.Key is empty.
var ErrWrongKey = errors.New("wrong encryption key")

// MinKeyLength is the shortest key ReadKeyFile accepts, in bytes: 32
// random bytes, written as 64 hex digits (openssl rand -hex 32), are what
// it is meant for.
const MinKeyLength = 32

// keyCheckFile, in the data dir, holds a keyed hash of the key the store
// is encrypted with: not the key, but enough to tell a wrong one before
// the server reads, or rewrites, anything with it.
const keyCheckFile = "data-key.check"

// ReadKeyFile reads the encryption key of a store from path: the file's
// bytes, without the blank characters around them, at least MinKeyLength
// of them. The file must be the owner's alone (chmod 600): a key others
// can read protects nothing.
func ReadKeyFile(path string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("reading the key file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("key file %s has mode %s: others than its owner can reach it; run chmod 600 %s", path, info.Mode().Perm(), path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the key file: %w", err)
	}
	key := bytes.TrimSpace(raw)
	if len(key) < MinKeyLength {
		return "", fmt.Errorf("key file %s holds %d bytes, fewer than %d: write a random key in it, such as the output of `openssl rand -hex 32`", path, len(key), MinKeyLength)
	}
	return string(key), nil
}

// keyCheck is the content of keyCheckFile for key.
func keyCheck(key string) []byte {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte("sluice data key check"))
	return []byte(hex.EncodeToString(mac.Sum(nil)) + "\n")
}

// checkKey returns an error wrapping ErrWrongKey when the data dir was
// encrypted with another key than c.Key, or with one and c.Key is empty.
func (c Config) checkKey() error {
	if info, err := os.Stat(c.DataDir); err != nil || !info.IsDir() {
		return nil // a new data dir, or one the server will say is wrong
	}
	path := filepath.Join(c.DataDir, keyCheckFile)
	recorded, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // never encrypted, or encrypted for the first time now
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	case c.Key == "":
		return fmt.Errorf("%w: the store in %s is encrypted, and no key was given: give the key it was encrypted with (sluice serve --data-key-file)", ErrWrongKey, c.DataDir)
	case !hmac.Equal(bytes.TrimSpace(recorded), bytes.TrimSpace(keyCheck(c.Key))):
		return fmt.Errorf("%w: the store in %s was encrypted with another key: give the key it was encrypted with (sluice serve --data-key-file)", ErrWrongKey, c.DataDir)
	}
	return nil
}

// recordKey writes the check of c.Key in the data dir, once the server
// has started with it: its streams are encrypted from then on.
func (c Config) recordKey() error {
	if c.Key == "" {
		return nil
	}
	path := filepath.Join(c.DataDir, keyCheckFile)
	if err := os.WriteFile(path, keyCheck(c.Key), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// checkEncryption checks that the server could read every encrypted
// stream, and then records the key it encrypts with.
func (s *Server) checkEncryption(c Config) error {
	missing, err := s.unreadableStreams(c.DataDir)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		if c.Key == "" {
			return fmt.Errorf("%w: streams %v in %s are encrypted, and no key was given: give the key they were encrypted with (sluice serve --data-key-file)", ErrWrongKey, missing, c.DataDir)
		}
		return fmt.Errorf("%w: streams %v in %s cannot be decrypted with the key given: give the key they were encrypted with (sluice serve --data-key-file)", ErrWrongKey, missing, c.DataDir)
	}
	return c.recordKey()
}

// unreadableStreams returns the names of the encrypted streams in the
// data dir the server did not load: it could not decrypt them. (Without
// the key check file, a wrong key shows only here, and the streams would
// seem not to exist.)
func (s *Server) unreadableStreams(dataDir string) ([]string, error) {
	keys, err := filepath.Glob(filepath.Join(dataDir, "jetstream", "*", "streams", "*", server.JetStreamMetaFileKey))
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	jsz, err := s.srv.Jsz(&server.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		return nil, fmt.Errorf("listing the streams loaded: %w", err)
	}
	var loaded []string
	for _, acc := range jsz.AccountDetails {
		for _, st := range acc.Streams {
			loaded = append(loaded, st.Name)
		}
	}
	var missing []string
	for _, key := range keys {
		// A name with a leading dot is a stream being deleted.
		if name := filepath.Base(filepath.Dir(key)); !strings.HasPrefix(name, ".") && !slices.Contains(loaded, name) {
			missing = append(missing, name)
		}
	}
	return missing, nil
}
