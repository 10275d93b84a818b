package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// dataDirLockFile is the file in --data-dir that the serve using the
// directory holds locked, and writes its pid in.
const dataDirLockFile = "sluice.lock"

// errLocked is what tryLock returns when another process holds the lock.
var errLocked = errors.New("locked by another process")

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
	file *os.File
}

// lockDataDir creates dir if need be and locks it, before anything else
// reads or writes in it. It returns a *dataDirInUseError when another
// process holds it.
func lockDataDir(dir string) (*dataDirLock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, dataDirLockFile)
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: opening its lock file: %w", dir, err)
	}
	if err := tryLock(file); err != nil {
		var pid int
		if errors.Is(err, errLocked) {
			pid = lockHolder(file)
		}
		_ = file.Close() // only read
		if errors.Is(err, errLocked) {
			return nil, &dataDirInUseError{dir: dir, pid: pid}
		}
		return nil, fmt.Errorf("--data-dir %s: locking %s: %w", dir, path, err)
	}
	// The pid is for the message of a serve refused; the lock is what
	// counts.
	if err := file.Truncate(0); err == nil {
		_, _ = file.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dataDirLock{file: file}, nil
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

// release unlocks the directory, for another serve to use it.
func (l *dataDirLock) release() {
	_ = l.file.Close() // closing the file releases the lock
}
