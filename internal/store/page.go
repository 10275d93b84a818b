package store

import (
	"slices"
	"strings"

	"github.com/sluicehq/sluice/schemas"
)

// Sizes of a page of a list (docs/architecture.md#the-management-api).
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 100
)

// Page selects one page of a list, which is ordered newest first.
type Page struct {
	// Limit is how many items the page holds at most, 1 to MaxPageLimit; 0
	// means DefaultPageLimit.
	Limit int
	// BeforeID, when set, starts the page after this id: the page holds
	// items older than it. It is the nextBeforeID a list returned, and need
	// not name an item that still exists.
	BeforeID string
	// Match, if set, keeps the items it returns true for and drops the
	// others before the page is cut, so that a page holds up to Limit
	// items that match and the next page starts after its last (the API's
	// ?filter=). It gets an item as the list returns it, and is called
	// on the items after BeforeID, newest first, until the page and one
	// more match are found. Its error ends the list and is returned as it
	// is.
	Match func(item any) (bool, error)
}

// resolve returns the page with its default applied, or a *ValidationError
// (of the query parameters limit and before_id) if the page is not valid for
// ids of the prefix.
func (p Page) resolve(prefix string) (Page, error) {
	if p.Limit == 0 {
		p.Limit = DefaultPageLimit
	}
	if p.Limit < 1 || p.Limit > MaxPageLimit {
		return Page{}, invalid("limit", "must be from 1 to %d, not %d", MaxPageLimit, p.Limit)
	}
	if p.BeforeID != "" {
		if err := schemas.CheckID(prefix, p.BeforeID); err != nil {
			return Page{}, invalid("before_id", "must be an id from the list, %q followed by 27 base62 characters, not %q: use the next page URI the list returned",
				prefix, p.BeforeID)
		}
	}
	return p, nil
}

// paginate sorts items newest first and returns those of the page, and the
// BeforeID of the next page, or "" if this page is the last. Ids are a
// prefix and a KSUID, whose string order is total, so no two items tie and
// a page starts exactly after BeforeID, whether or not that item still
// exists. The store makes ids with schemas.IDs (see Store.newID), whose
// string order is their creation order to the nanosecond; ids made before
// it sort by creation only to the second.
func paginate[T any](items []T, id func(T) string, p Page) ([]T, string, error) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(id(b), id(a)) })
	if p.BeforeID != "" {
		start, _ := slices.BinarySearchFunc(items, p.BeforeID, func(item T, before string) int {
			return strings.Compare(before, id(item)) // items descend
		})
		// items[start] is the first item whose id is at most BeforeID.
		if start < len(items) && id(items[start]) == p.BeforeID {
			start++
		}
		items = items[start:]
	}
	if p.Match != nil {
		var kept []T
		for _, item := range items {
			ok, err := p.Match(item)
			if err != nil {
				return nil, "", err
			}
			if ok {
				if kept = append(kept, item); len(kept) > p.Limit {
					break
				}
			}
		}
		items = kept
	}
	if len(items) <= p.Limit {
		return items, "", nil
	}
	items = items[:p.Limit]
	return items, id(items[len(items)-1]), nil
}
