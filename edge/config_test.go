package edge_test

import (
	"testing"

	"github.com/sluicehq/sluice/edge"
)

// TestDefaultRequestBurst: an account's default burst is a tenth of a
// second of its rate, at least 10 or the rate when lower, at least 1.
func TestDefaultRequestBurst(t *testing.T) {
	for _, tt := range []struct {
		rate float64
		want int
	}{
		{1000, 100},
		{250, 25},
		{50, 10},
		{5, 5},
		{1, 1},
		{0.001, 1},
	} {
		if got := edge.DefaultRequestBurst(tt.rate); got != tt.want {
			t.Errorf("DefaultRequestBurst(%v) = %d, want %d", tt.rate, got, tt.want)
		}
	}
}
