package dirlock_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/dirlock"
)

// TestAcquireMissingDir checks that Acquire does not create the directory
// and says it could not open the lock file.
func TestAcquireMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	_, err := dirlock.Acquire(dir, "x.lock", 0o600)
	if err == nil || !strings.HasPrefix(err.Error(), "opening its lock file: ") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Acquire in a missing directory: %v, want an error opening the lock file that wraps os.ErrNotExist", err)
	}
	if _, statErr := os.Stat(dir); !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("Acquire made the directory: %v", statErr)
	}
}
