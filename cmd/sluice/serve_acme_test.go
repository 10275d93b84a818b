package main

import (
	"strings"
	"testing"
)

// TestACMEFlags: the named authorities and https URLs are taken, a
// resolver goes with a directory and is HOST:PORT.
func TestACMEFlags(t *testing.T) {
	for _, c := range []struct {
		flags acmeFlags
		err   string
	}{
		{acmeFlags{}, ""},
		{acmeFlags{directory: "letsencrypt"}, ""},
		{acmeFlags{directory: "letsencrypt-staging", resolver: "127.0.0.53:53"}, ""},
		{acmeFlags{directory: "https://pebble.test:14000/dir"}, ""},
		{acmeFlags{directory: "http://pebble.test/dir"}, "https:// directory URL"},
		{acmeFlags{directory: "zerossl"}, "neither letsencrypt"},
		{acmeFlags{resolver: "127.0.0.53:53"}, "goes with --acme-directory"},
		{acmeFlags{directory: "letsencrypt", resolver: "127.0.0.53"}, "not HOST:PORT"},
	} {
		err := c.flags.validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.err)
		}
	}
}
