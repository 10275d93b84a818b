// Package disktest gives tests a small file system of their own to fill:
// a tmpfs mounted for the test, and a filler file that takes all its
// space. It is for tests only, on Linux, as root (CI runs tests as root);
// elsewhere the tests that need it are skipped, saying why.
package disktest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes on a new directory and returns the
// directory. It skips the test, saying why, where mounting is not allowed
// (not root, no CAP_SYS_ADMIN). The file system is unmounted at cleanup,
// after the cleanups registered later (those of what uses it) have run.
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a %d MiB tmpfs to fill (%v): the test needs root or CAP_SYS_ADMIN on Linux, as CI has", size>>20, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file in dir until the file system has no space left, to
// the last byte, and returns its path: remove it to free the space.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for _, n := range []int{len(chunk), 4096, 512, 1} {
		for {
			_, err := f.Write(chunk[:n])
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatalf("filling %s: %v", dir, err)
			}
		}
	}
	return path
}
