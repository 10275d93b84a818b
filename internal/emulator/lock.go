package emulator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the file, in Config.DataDir, that the emulator using the
// directory holds locked (an exclusive flock) and writes its pid in, so
// that two processes never share a state directory.
const LockFile = "emulator.lock"

// errLocked is what tryLock returns when another process holds the lock.
var errLocked = errors.New("locked by another process")

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

// dirLock is the lock of a Config.DataDir, held from New until Close (or
// the end of Serve). The kernel releases it when the process ends, however
// it ends.
type dirLock struct {
	file *os.File
}

// lockDir creates dir if need be and locks it, before anything reads or
// writes in it. It returns a *DataDirInUseError when another process, or
// another Server of this one, holds it.
func lockDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the emulator's state directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the emulator's state directory %s: opening its lock file: %w", dir, err)
	}
	if err := tryLock(file); err != nil {
		var pid int
		if errors.Is(err, errLocked) {
			pid = lockHolder(file)
		}
		_ = file.Close() // only read
		if errors.Is(err, errLocked) {
			return nil, &DataDirInUseError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("the emulator's state directory %s: locking %s: %w", dir, path, err)
	}
	// The pid is for the message of an emulator refused; the lock is what
	// counts.
	if err := file.Truncate(0); err == nil {
		_, _ = file.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{file: file}, nil
}

// lockHolder returns the pid the holder of the lock wrote in file, or 0.
func lockHolder(file *os.File) int {
	buf := make([]byte, 32)
	n, _ := file.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// release unlocks the directory, for another emulator to use it.
func (l *dirLock) release() {
	_ = l.file.Close() // closing the file releases the lock
}
