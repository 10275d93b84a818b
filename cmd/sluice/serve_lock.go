package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/internal/dirlock"
)

// dataDirLockFile is the file in --data-dir that the serve using the
// directory holds locked, and writes its pid in.
const dataDirLockFile = "sluice.lock"

// dataDirInUseError is the refusal of a serve whose --data-dir another
// serve uses.
type dataDirInUseError struct {
	dir string
	pid int // of the serve holding the directory; 0 when unknown
}

func (e *dataDirInUseError) Error() string {
	holder := "another sluice serve"
	if e.pid > 0 {
		holder += fmt.Sprintf(" (pid %d)", e.pid)
	}
	return fmt.Sprintf("--data-dir %s is in use by %s: stop it first, or give this one another --data-dir", e.dir, holder)
}

// dataDirLock is the lock of a data directory, held while serve runs, so
// that two embedded NATS servers never open the same store. The kernel
// releases it when the process ends, however it ends.
type dataDirLock struct {
	lock *dirlock.Lock
}

// lockDataDir creates dir if need be and locks it, before anything else
// reads or writes in it. It returns a *dataDirInUseError when another
// process holds it.
func lockDataDir(dir string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	lock, err := dirlock.Acquire(dir, dataDirLockFile, 0o640)
	if held := (*dirlock.HeldError)(nil); errors.As(err, &held) {
		return nil, &dataDirInUseError{dir: dir, pid: held.PID}
	}
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	return &dataDirLock{lock: lock}, nil
}

// release unlocks the directory, for another serve to use it.
func (l *dataDirLock) release() {
	l.lock.Release()
}
