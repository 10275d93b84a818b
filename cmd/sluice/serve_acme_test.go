package main

import (
	"strings"
	"testing"
	"time"
)

// TestACMEFlags: the named authorities and https URLs are taken, a
// resolver goes with a directory and is HOST:PORT.
func TestACMEFlags(t *testing.T) {
	for _, c := range []struct {
		flags acmeFlags
		err   string
	}{
		{acmeFlags{}, ""},
		{acmeFlags{directory: "letsencrypt", interval: time.Second}, ""},
		{acmeFlags{directory: "letsencrypt-staging", resolver: "127.0.0.53:53", interval: time.Second}, ""},
		{acmeFlags{directory: "https://pebble.test:14000/dir", interval: time.Second}, ""},
		{acmeFlags{directory: "http://pebble.test/dir", interval: time.Second}, "https:// directory URL"},
		{acmeFlags{directory: "zerossl", interval: time.Second}, "neither letsencrypt"},
		{acmeFlags{resolver: "127.0.0.53:53"}, "goes with --acme-directory"},
		{acmeFlags{directory: "letsencrypt", resolver: "127.0.0.53", interval: time.Second}, "not HOST:PORT"},
		{acmeFlags{directory: "letsencrypt"}, "--acme-interval must be positive"},
	} {
		err := c.flags.validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.err)
		}
	}
}
