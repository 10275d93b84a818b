package store

import (
	"slices"
	"testing"
)

// TestDomainNodes stops a reservation's nodes below public suffixes and
// the service's domains, which no account reserves, so that no node is
// written by every account under them.
func TestDomainNodes(t *testing.T) {
	service := []string{"sluice.app", "edge.sluice.dev"}
	for _, c := range []struct {
		base string
		want []string
	}{
		{"a.b.example.co.uk", []string{"a.b.example.co.uk", "b.example.co.uk", "example.co.uk"}},
		{"example.com", []string{"example.com"}},
		{"x.me.sluice.app", []string{"x.me.sluice.app", "me.sluice.app"}},
		{"me.edge.sluice.dev", []string{"me.edge.sluice.dev"}},
		{"other.sluice.dev", []string{"other.sluice.dev"}},
		{"co.uk", nil},
		{"user.github.io", []string{"user.github.io"}},
	} {
		if got := domainNodes(c.base, service); !slices.Equal(got, c.want) {
			t.Errorf("domainNodes(%q) = %q, want %q", c.base, got, c.want)
		}
	}
}
