package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/net/publicsuffix"
)

// The names of reserved domains form a tree, in which each account's
// reservations are kept apart from every other account's: a reserved
// domain, its wildcard and every name under them belong to one account.
// Account A holding example.com or *.example.com, no other account may
// reserve example.com, *.example.com, app.example.com or
// *.app.example.com; A holding app.example.com, no other account may
// reserve example.com or *.example.com, which would cover it. Sibling
// names of two accounts (a.example.com, b.example.com) do not overlap.
//
// Without this, an account could reserve a name under another account's
// wildcard, or a wildcard over its names, and take its traffic: an edge
// serves a name by the most specific reservation.
//
// Each name in the tree down from the topmost name an account can reserve
// (below a public suffix and below the service's own domains, which no
// account reserves) has a node key (domainNodeKey), written in the batch
// that creates or deletes a reservation at or under it. Of two
// overlapping creates at once, from any processes, one fails its
// compare-and-swap on the node both write, starts over, and is refused.

// domainNode is the value of a node key: which account holds reservations
// of the name itself (the name or its wildcard), and which hold
// reservations under it.
type domainNode struct {
	// Owner is the account that has reserved the name, its wildcard or
	// both (Held of them); "" for none.
	Owner string `json:"owner,omitempty"`
	Held  int    `json:"held,omitempty"`
	// Under counts, by account, the reservations of names under this one.
	Under map[string]int `json:"under,omitempty"`
}

// domainNodeKey is the node key of a name, across all accounts.
func domainNodeKey(name string) string { return "reserved_domain_tree." + foldedHash(name) }

// reservationBase returns the name a reserved domain is at in the tree:
// the domain itself, or the name under a wildcard's "*.".
func reservationBase(domain string) string { return strings.TrimPrefix(domain, "*.") }

// domainNodes returns the names whose nodes a reservation at base is
// checked against and counted in: base and each name above it, up to (not
// including) the first that is a public suffix, a service domain or above
// one, which no account may reserve nor cover with a wildcard
// (CheckReservedDomain, CheckNotServiceDomain), so that no node is shared
// by the names of every registrant of a suffix.
func domainNodes(base string, serviceDomains []string) []string {
	var nodes []string
	for name := base; name != ""; _, name, _ = strings.Cut(name, ".") {
		if suffix, _ := publicsuffix.PublicSuffix(name); suffix == name {
			break
		}
		if slices.ContainsFunc(serviceDomains, func(sd string) bool { return sd == name || strings.HasSuffix(sd, "."+name) }) {
			break
		}
		nodes = append(nodes, name)
	}
	return nodes
}

// domainTreeWrites returns the writes of the node keys d.Tree for adding
// (delta 1) or removing (delta -1) the reservation d, each at the revision
// read now. Adding, it returns a refusal holding a *DomainTakenError if
// another account has a reservation that d would overlap.
//
// A reservation made before the tree was kept has no Tree, and its
// removal writes nothing: it would uncount the account's other
// reservations at the same names.
func (s *Store) domainTreeWrites(ctx context.Context, d ReservedDomain, delta int) ([]write, error) {
	base := reservationBase(d.Domain)
	writes := make([]write, 0, len(d.Tree))
	for _, name := range d.Tree {
		key := domainNodeKey(name)
		node, revision, err := s.readDomainNode(ctx, key)
		if err != nil {
			return nil, err
		}
		if delta > 0 {
			if err := node.overlap(d, name); err != nil {
				return nil, refusal{err}
			}
		}
		if name == base {
			switch {
			case delta > 0:
				node.Owner, node.Held = d.AccountID, node.Held+1
			case node.Owner == d.AccountID && node.Held > 1:
				node.Held--
			case node.Owner == d.AccountID:
				node.Owner, node.Held = "", 0
			}
		} else {
			if node.Under == nil {
				node.Under = make(map[string]int)
			}
			node.Under[d.AccountID] = max(node.Under[d.AccountID]+delta, 0)
			if node.Under[d.AccountID] == 0 {
				delete(node.Under, d.AccountID)
			}
		}
		if node.Owner == "" && len(node.Under) == 0 {
			// Deleted even when it reads as never written: the read may
			// come from a replica that lags behind, and the write then
			// fails its compare-and-swap rather than leave the node
			// counting a reservation that is gone (see release).
			writes = append(writes, write{key: key, del: true, revision: revision})
			continue
		}
		value, err := json.Marshal(node)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", key, err)
		}
		writes = append(writes, write{key: key, value: value, revision: revision})
	}
	return writes, nil
}

// overlap returns a *DomainTakenError if the node of name, which is the
// base of the reservation d or a name above it, shows another account's
// reservation that d would overlap, or nil.
func (n domainNode) overlap(d ReservedDomain, name string) error {
	if n.Owner != "" && n.Owner != d.AccountID {
		return &DomainTakenError{Domain: d.Domain, Within: name}
	}
	if name != reservationBase(d.Domain) {
		return nil // a sibling under a name above d does not overlap d
	}
	for account, count := range n.Under {
		if account != d.AccountID && count > 0 {
			return &DomainTakenError{Domain: d.Domain, Covers: name}
		}
	}
	return nil
}

// readDomainNode returns the node of key and the revision to write it at:
// a zero node and the revision of its deletion (or 0) if it has none.
func (s *Store) readDomainNode(ctx context.Context, key string) (domainNode, uint64, error) {
	var node domainNode
	msg, err := s.stream.GetLastMsgForSubject(ctx, kvSubject(key))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return node, 0, nil
	}
	if err != nil {
		return node, 0, fmt.Errorf("reading %s: %w", key, err)
	}
	switch msg.Header.Get(headerKVOperation) {
	case kvDelete, kvPurge:
		return node, msg.Sequence, nil
	}
	if err := json.Unmarshal(msg.Data, &node); err != nil {
		return node, 0, fmt.Errorf("decoding %s: %w", key, err)
	}
	return node, msg.Sequence, nil
}

// TrackReservedDomains counts in the tree each reservation made before it
// was kept (ReservedDomain.Tree nil), so that from then on no other
// account may reserve a name that overlaps it. Each is counted in the
// batch that sets its Tree, at the revisions read, so that any number of
// processes may run it at once, alongside creates and deletes: a
// reservation is counted once. A reservation that overlaps another
// account's counted one (two made before the tree) stays uncounted, as it
// was, and its domain is returned in skipped.
func (s *Store) TrackReservedDomains(ctx context.Context) (skipped []string, err error) {
	entries, err := s.entries(ctx, reservedDomains.kind+".*.*")
	if err != nil {
		return nil, fmt.Errorf("listing reserved domains: %w", err)
	}
	for _, entry := range entries {
		var d ReservedDomain
		if err := json.Unmarshal(entry.Value(), &d); err != nil {
			return skipped, fmt.Errorf("decoding %s: %w", entry.Key(), err)
		}
		nodes := domainNodes(reservationBase(d.Domain), s.serviceDomains)
		if d.Tree != nil || len(nodes) == 0 {
			continue
		}
		_, _, err := modify(ctx, s, entry.Key(), func(v *ReservedDomain) error {
			if v.Tree == nil { // else counted meanwhile: nothing is written
				v.Tree = nodes
			}
			return nil
		}, writeOptions{}, func(_, after ReservedDomain) ([]write, error) {
			return s.domainTreeWrites(ctx, after, 1)
		})
		var refused refusal
		switch {
		case errors.Is(err, ErrNotFound): // deleted meanwhile
		case errors.As(err, &refused):
			skipped = append(skipped, d.Domain)
		case err != nil:
			return skipped, fmt.Errorf("counting reserved domain %s in the domain tree: %w", d.ID, err)
		}
	}
	return skipped, nil
}
