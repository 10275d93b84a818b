package emulator

import (
	"errors"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/internal/dirlock"
)

// LockFile is the file, in Config.DataDir, that the emulator using the
// directory holds locked (an exclusive flock) and writes its pid in, so
// that two processes never share a state directory.
const LockFile = "emulator.lock"

// DataDirInUseError is New's refusal of a Config.DataDir another emulator
// holds: another `sluice emulator --data-dir`, or the emulator of a
// `sluice serve --dev` on the same data dir.
type DataDirInUseError struct {
	// Dir is the Config.DataDir refused.
	Dir string
	// PID is the process holding it, 0 when unknown.
	PID int
}

func (e *DataDirInUseError) Error() string {
	holder := "another emulator or sluice serve --dev"
	if e.PID > 0 {
		holder += fmt.Sprintf(" (pid %d)", e.PID)
	}
	return fmt.Sprintf("the emulator's state directory %s is in use by %s: stop it first, or give this one another directory", e.Dir, holder)
}

// lockDir creates dir if need be and locks it, before anything reads or
// writes in it, until Close (or the end of Serve). It returns a
// *DataDirInUseError when another process, or another Server of this one,
// holds it.
func lockDir(dir string) (*dirlock.Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the emulator's state directory: %w", err)
	}
	lock, err := dirlock.Acquire(dir, LockFile, 0o600)
	if held := (*dirlock.HeldError)(nil); errors.As(err, &held) {
		return nil, &DataDirInUseError{Dir: dir, PID: held.PID}
	}
	if err != nil {
		return nil, fmt.Errorf("the emulator's state directory %s: %w", dir, err)
	}
	return lock, nil
}
