package editdistance

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"addr", "addr", 0}, {"adr", "addr", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"flaw", "lawn", 2}} {
		if got := Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Levenshtein(c.b, c.a); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
