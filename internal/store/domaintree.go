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

// The names accounts hold form one tree, in which each account's names
// are kept apart from every other account's. An account holds a name by
// a reserved domain (the name, its wildcard or both) or by an agent
// ingress (its domain, the tunnel.<region>.<domain> names its agents
// connect to, and everything else under it): the name and every name
// under it belong to that account. Account A holding example.com, by any
// of the three, no other account may reserve or make an agent ingress of
// example.com, *.example.com, app.example.com or *.app.example.com; A
// holding app.example.com, no other account may take example.com or
// *.example.com, which would cover it. Sibling names of two accounts
// (a.example.com, b.example.com) do not overlap. An account may nest its
// own names in any way: reserve names under its agent ingress's domain,
// or make an agent ingress under its own wildcard.
//
// Without this, an account could take a name under another account's
// wildcard or agent ingress, or one over its names, and take its
// traffic: an edge serves a name by the most specific reservation, and
// an agent connects to tunnel.<region>.<domain>.
//
// Each name in the tree down from the topmost name an account can hold
// (below a public suffix and below the service's own domains, which no
// account holds) has a node key (domainNodeKey), written in the batch
// that creates or deletes a reserved domain or an agent ingress at or
// under it. Of two overlapping creates at once, from any processes, one
// fails its compare-and-swap on the node both write, starts over, and is
// refused.

// domainClaim is what a resource that holds a name counts in the tree: a
// reserved domain or an agent ingress.
type domainClaim struct {
	// AccountID is the account that holds the name.
	AccountID string
	// Domain is the domain as the resource has it, for messages: a
	// wildcard keeps its "*.".
	Domain string
	// Tree is the names whose nodes count the claim, its base first
	// (domainNodes); nil for a resource made before the tree counted it.
	Tree []string
}

// base returns the name the claim is at in the tree: the domain itself,
// or the name under a wildcard's "*.".
func (c domainClaim) base() string { return reservationBase(c.Domain) }

// domainNode is the value of a node key: which account holds the name
// itself, and which hold names under it.
type domainNode struct {
	// Owner is the account that holds the name, by Held resources: its
	// reserved domain, its reserved wildcard and its agent ingress, each
	// at most once; "" for none.
	Owner string `json:"owner,omitempty"`
	Held  int    `json:"held,omitempty"`
	// Under counts, by account, the resources that hold names under this
	// one.
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
// (delta 1) or removing (delta -1) the claim d, each at the revision read
// now. Adding, it returns a refusal holding a *DomainTakenError if
// another account holds a name that d would overlap.
//
// A resource made before the tree counted it has no Tree, and its removal
// writes nothing: it would uncount the account's other resources at the
// same names.
func (s *Store) domainTreeWrites(ctx context.Context, d domainClaim, delta int) ([]write, error) {
	base := d.base()
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
// base of the claim d or a name above it, shows another account's name
// that d would overlap, or nil.
func (n domainNode) overlap(d domainClaim, name string) error {
	if n.Owner != "" && n.Owner != d.AccountID {
		return &DomainTakenError{Domain: d.Domain, Within: name}
	}
	if name != d.base() {
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

// TrackDomainTree counts in the tree each reserved domain and agent
// ingress made before the tree counted it (Tree nil), so that from then
// on no other account may take a name that overlaps it. Each is counted
// in the batch that sets its Tree, at the revisions read, so that any
// number of processes may run it at once, alongside creates and deletes:
// a resource is counted once. They are counted oldest first, of both
// families, and one that overlaps another account's counted name (two
// made before the tree) stays uncounted, as it was: the name stays with
// whichever was made first. Each uncounted one is returned in skipped,
// as its family's noun and its domain.
func (s *Store) TrackDomainTree(ctx context.Context) (skipped []string, err error) {
	var pending []untracked
	for _, more := range []func() ([]untracked, error){
		func() ([]untracked, error) {
			return untrackedOf(ctx, s, &reservedDomains, func(d *ReservedDomain) *[]string { return &d.Tree }, ReservedDomain.claim)
		},
		func() ([]untracked, error) {
			return untrackedOf(ctx, s, &agentIngresses, func(a *AgentIngress) *[]string { return &a.Tree }, AgentIngress.claim)
		},
	} {
		found, err := more()
		if err != nil {
			return nil, err
		}
		pending = append(pending, found...)
	}
	slices.SortFunc(pending, func(a, b untracked) int { return strings.Compare(a.ksuid, b.ksuid) })
	for _, u := range pending {
		err := u.count()
		var refused refusal
		switch {
		case errors.Is(err, ErrNotFound): // deleted meanwhile
		case errors.As(err, &refused):
			skipped = append(skipped, u.noun+" "+u.domain)
		case err != nil:
			return skipped, fmt.Errorf("counting %s %s in the domain tree: %w", u.noun, u.domain, err)
		}
	}
	return skipped, nil
}

// untracked is a resource the domain tree does not count yet.
type untracked struct {
	// ksuid is its id after the prefix, which sorts by creation time.
	ksuid        string
	noun, domain string
	// count counts it (see TrackDomainTree).
	count func() error
}

// untrackedOf returns the resources of the family that the tree does not
// count, whose Tree is where tree points and whose claim is claim's.
func untrackedOf[T any](ctx context.Context, s *Store, f *family[T], tree func(*T) *[]string, claim func(T) domainClaim) ([]untracked, error) {
	entries, err := s.entries(ctx, f.kind+".*.*")
	if err != nil {
		return nil, fmt.Errorf("listing %ss: %w", f.noun, err)
	}
	var found []untracked
	for _, entry := range entries {
		var v T
		if err := json.Unmarshal(entry.Value(), &v); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", entry.Key(), err)
		}
		c := claim(v)
		nodes := domainNodes(c.base(), s.serviceDomains)
		if *tree(&v) != nil || len(nodes) == 0 {
			continue
		}
		id, _, _ := f.meta(&v)
		key := entry.Key()
		found = append(found, untracked{ksuid: strings.TrimPrefix(*id, f.prefix), noun: f.noun, domain: c.Domain, count: func() error {
			_, _, err := modify(ctx, s, key, func(v *T) error {
				if *tree(v) == nil { // else counted meanwhile: nothing is written
					*tree(v) = nodes
				}
				return nil
			}, writeOptions{}, func(_, after T) ([]write, error) {
				return s.domainTreeWrites(ctx, claim(after), 1)
			})
			return err
		}})
	}
	return found, nil
}
