//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ownPrivateFile returns an error unless the file is this user's and
// only this user's to read (mode 0600 or stricter).
func ownPrivateFile(info fs.FileInfo) error {
	if info.Mode().Perm()&0o077 != 0 {
		return errors.New("others may read or write it (its mode is not 0600)")
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return errors.New("another user owns it")
	}
	return nil
}
