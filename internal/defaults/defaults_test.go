package defaults

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	for _, tt := range []struct{ in, want int }{{0, 7}, {-3, 7}, {1, 1}, {9, 9}} {
		v := tt.in
		Positive(&v, 7)
		if v != tt.want {
			t.Errorf("Positive(%d, 7) = %d, want %d", tt.in, v, tt.want)
		}
	}
	d := time.Duration(0)
	Positive(&d, time.Second)
	if d != time.Second {
		t.Errorf("a zero duration became %v, want 1s", d)
	}
}
