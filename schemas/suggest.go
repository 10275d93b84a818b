package schemas

import (
	"slices"
	"strings"

	"github.com/sluicehq/sluice/internal/editdistance"
)

// Suggest returns at most n kind names close to name, closest first: kinds
// that contain it, that it abbreviates word by word ("tls_cert_created" for
// "tls_certificate_created.v0"), or that are a few edits away. It is for
// error messages about unknown kinds.
func (c *Catalogue) Suggest(name string, n int) []string {
	type candidate struct {
		name     string
		distance int
	}
	query := strings.ToLower(strings.TrimSpace(name))
	if query == "" {
		return nil
	}
	var found []candidate
	for _, k := range c.kinds {
		d := min(editdistance.Levenshtein(query, k.Name), editdistance.Levenshtein(query+".v0", k.Name))
		switch {
		case strings.Contains(k.Name, query):
			found = append(found, candidate{k.Name, 0})
		case abbreviates(query, k.Name) || d <= max(2, len(k.Name)/4):
			found = append(found, candidate{k.Name, d})
		}
	}
	slices.SortStableFunc(found, func(a, b candidate) int { return a.distance - b.distance })
	out := make([]string, 0, min(n, len(found)))
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.name)
	}
	return out
}

// abbreviates reports whether every word of query starts the corresponding
// word of kind, words being separated by "_" and the version left out.
func abbreviates(query, kind string) bool {
	q := strings.Split(strings.TrimSuffix(query, ".v0"), "_")
	k := strings.Split(strings.TrimSuffix(kind, ".v0"), "_")
	if len(q) != len(k) {
		return false
	}
	for i := range q {
		if q[i] == "" || !strings.HasPrefix(k[i], q[i]) {
			return false
		}
	}
	return true
}
