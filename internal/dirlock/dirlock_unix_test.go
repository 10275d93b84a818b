//go:build unix

package dirlock_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/internal/dirlock"
)

// TestAcquire checks that a directory is held once at a time, that the
// refusal names the holder's pid, which the holder wrote in the lock file,
// and that a released lock can be taken again.
func TestAcquire(t *testing.T) {
	dir := t.TempDir()
	first, err := dirlock.Acquire(dir, "x.lock", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	if written, err := os.ReadFile(filepath.Join(dir, "x.lock")); err != nil || string(written) != strconv.Itoa(pid)+"\n" {
		t.Errorf("the lock file holds %q, %v; want the pid %d and a newline", written, err, pid)
	}
	_, err = dirlock.Acquire(dir, "x.lock", 0o600)
	var held *dirlock.HeldError
	if !errors.As(err, &held) || held.PID != pid {
		t.Fatalf("second Acquire: %v, want a *HeldError naming pid %d", err, pid)
	}
	if want := "locked by another process (pid " + strconv.Itoa(pid) + ")"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	first.Release()
	again, err := dirlock.Acquire(dir, "x.lock", 0o600)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	again.Release()
}

// TestAcquireHolderUnknown checks that a lock file without a pid, as a
// holder that has not written it yet leaves it, gives a *HeldError with
// PID 0 and a message without a pid.
func TestAcquireHolderUnknown(t *testing.T) {
	dir := t.TempDir()
	first, err := dirlock.Acquire(dir, "x.lock", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	if err := os.WriteFile(filepath.Join(dir, "x.lock"), []byte("not a pid"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = dirlock.Acquire(dir, "x.lock", 0o600)
	var held *dirlock.HeldError
	if !errors.As(err, &held) || held.PID != 0 || err.Error() != "locked by another process" {
		t.Fatalf("Acquire of a lock whose holder is unknown: %v, want a *HeldError with no pid", err)
	}
}
