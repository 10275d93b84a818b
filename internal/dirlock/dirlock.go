// Package dirlock holds a directory for one process at a time: an
// exclusive flock of a file in it, in which the holder writes its pid for
// the message of a process refused. The kernel releases the lock when the
// process ends, however it ends. `sluice serve` locks its --data-dir with
// it, the emulator its state directory.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// errLocked is what tryLock returns when another process holds the lock.
var errLocked = errors.New("locked by another process")

// HeldError is Acquire's refusal of a lock another process holds, or
// another Lock of this process.
type HeldError struct {
	// PID is the holder's, as it wrote it in the lock file; 0 when unknown.
	PID int
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%v (pid %d)", errLocked, e.PID)
	}
	return errLocked.Error()
}

// Lock is a held lock of a directory.
type Lock struct {
	file *os.File
}

// Acquire locks the directory dir, which must exist, through its file name,
// created with perm if need be, without waiting, before anything else reads
// or writes in dir; then it writes this process's pid in the file. It
// returns a *HeldError when another process, or another Lock of this one,
// holds it; its other errors say what failed, "opening its lock file: ..."
// or "locking PATH: ...", for the caller to say which directory.
//
// On systems without flock, it does not lock: the directory is not guarded
// there.
func Acquire(dir, name string, perm os.FileMode) (*Lock, error) {
	path := filepath.Join(dir, name)
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("opening its lock file: %w", err)
	}
	if err := tryLock(file); err != nil {
		var pid int
		if errors.Is(err, errLocked) {
			pid = holder(file)
		}
		_ = file.Close() // only read
		if errors.Is(err, errLocked) {
			return nil, &HeldError{PID: pid}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// The pid is for the message of a process refused; the lock is what
	// counts.
	if err := file.Truncate(0); err == nil {
		_, _ = file.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{file: file}, nil
}

// holder returns the pid the holder of the lock wrote in file, or 0.
func holder(file *os.File) int {
	buf := make([]byte, 32)
	n, _ := file.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

// Release unlocks the directory, for another process to use it.
func (l *Lock) Release() {
	_ = l.file.Close() // closing the file releases the lock
}
