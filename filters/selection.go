package filters

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/schemas"
)

// maxSuggestions is how many valid paths a FieldError lists.
const maxSuggestions = 8

// selection knows the paths a source of one kind may select: its selectable
// fields, and the groups above them ("conn", "http.request", "http"), each
// of which stands for every selectable field under it.
type selection struct {
	fields   map[string]bool
	groups   map[string]bool
	children map[string][]string // group ("" for the top) to the paths right under it, sorted
}

func newSelection(k *schemas.Kind) selection {
	s := selection{fields: map[string]bool{}, groups: map[string]bool{}, children: map[string][]string{}}
	for _, f := range k.Fields {
		if !f.Selectable {
			continue
		}
		s.fields[f.Path] = true
		parent, child := "", ""
		for _, seg := range strings.Split(f.Path, ".") {
			child = joinPath(parent, seg)
			if !slices.Contains(s.children[parent], child) {
				s.children[parent] = append(s.children[parent], child)
			}
			if child != f.Path {
				s.groups[child] = true
			}
			parent = child
		}
	}
	for _, c := range s.children {
		slices.Sort(c)
	}
	return s
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func (s selection) isGroup(path string) bool { return s.groups[path] }

func (s selection) valid(path string) bool { return s.fields[path] || s.groups[path] }

// suggest returns some valid paths near path: those right under the longest
// group path starts with, or the top-level ones.
func (s selection) suggest(path string) string {
	group := ""
	for i := strings.LastIndexByte(path, '.'); i > 0; i = strings.LastIndexByte(path[:i], '.') {
		if s.groups[path[:i]] {
			group = path[:i]
			break
		}
	}
	list := s.children[group]
	where := "valid paths include"
	if group != "" {
		where = "under " + group + " are"
	}
	if len(list) > maxSuggestions {
		return fmt.Sprintf("%s %s, …", where, strings.Join(list[:maxSuggestions], ", "))
	}
	return fmt.Sprintf("%s %s", where, strings.Join(list, ", "))
}

// CheckFields checks the field selection of a source of the kind: each path
// must be a selectable field ("conn.client_ip") or a group of them, which
// selects every field under it ("conn", "http.request"), and may appear only
// once. A path and a group above it may both appear; Normalize drops the
// path. An empty selection is valid here; what it means is the caller's
// decision.
//
// CheckFields returns ErrUnknownKind, ErrNotTraffic, or a *FieldError for
// the first invalid path, which names some valid ones.
func (e *Env) CheckFields(kind string, paths []string) error {
	ke, err := e.kind(kind)
	if err != nil {
		return err
	}
	s := ke.selection
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		fieldErr := &FieldError{Kind: kind, Path: p}
		switch {
		case p == "":
			fieldErr.Msg = "a field path must not be empty; " + s.suggest(p)
		case seen[p]:
			fieldErr.Msg = "selected more than once"
		case !s.valid(p):
			if f, ok := ke.kind.Field(p); ok && !f.Selectable {
				fieldErr.Msg = "the field cannot be selected; " + s.suggest(p)
			} else {
				fieldErr.Msg = "no such field or group of fields; " + s.suggest(p)
			}
		default:
			seen[p] = true
			continue
		}
		return fieldErr
	}
	return nil
}

// Normalize returns the paths sorted, without duplicates and without the
// paths a group among them already covers: ["conn.client_ip", "http",
// "conn", "http.request.method"] becomes ["conn", "http"]. It does not check
// the paths; call CheckFields first.
func Normalize(paths []string) []string {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		if !coveredByGroup(p, set) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// coveredByGroup reports whether a path above p is in set.
func coveredByGroup(p string, set map[string]bool) bool {
	for i := strings.IndexByte(p, '.'); i >= 0; {
		if set[p[:i]] {
			return true
		}
		next := strings.IndexByte(p[i+1:], '.')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}
