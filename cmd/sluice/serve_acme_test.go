package main

import (
	"strings"
	"testing"
	"time"
)

// TestACMEFlags: the named authorities and https URLs are taken, a
// resolver goes with a directory and is HOST:PORT, the budget of service
// domain orders is positive.
func TestACMEFlags(t *testing.T) {
	for _, c := range []struct {
		flags acmeFlags
		err   string
	}{
		{acmeFlags{}, ""},
		{acmeFlags{directory: "letsencrypt", interval: time.Second, serviceDomainOrders: 100}, ""},
		{acmeFlags{directory: "letsencrypt-staging", resolver: "127.0.0.53:53", interval: time.Second, serviceDomainOrders: 100}, ""},
		{acmeFlags{directory: "https://pebble.test:14000/dir", interval: time.Second, serviceDomainOrders: 100}, ""},
		{acmeFlags{directory: "http://pebble.test/dir", interval: time.Second, serviceDomainOrders: 100}, "https:// directory URL"},
		{acmeFlags{directory: "zerossl", interval: time.Second, serviceDomainOrders: 100}, "neither letsencrypt"},
		{acmeFlags{resolver: "127.0.0.53:53"}, "goes with --acme-directory"},
		{acmeFlags{directory: "letsencrypt", resolver: "127.0.0.53", interval: time.Second, serviceDomainOrders: 100}, "not HOST:PORT"},
		{acmeFlags{directory: "letsencrypt", serviceDomainOrders: 100}, "--acme-interval must be positive"},
		{acmeFlags{directory: "letsencrypt", interval: time.Second}, "--acme-service-domain-orders is 0"},
	} {
		err := c.flags.validate()
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.err)
		}
	}
}
