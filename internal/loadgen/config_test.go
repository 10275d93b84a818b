package loadgen

import (
	"testing"
	"time"
)

// TestSetDefault checks that setDefault fills a zero value of each kind
// the configurations use (a count, a duration, a name) and leaves a set
// one, negative values included, for Validate to judge.
func TestSetDefault(t *testing.T) {
	n, set := 0, -3
	setDefault(&n, 5)
	setDefault(&set, 5)
	d := time.Duration(0)
	setDefault(&d, time.Second)
	s, name := "", "blocking"
	setDefault(&s, "refusing")
	setDefault(&name, "refusing")
	if n != 5 || set != -3 || d != time.Second || s != "refusing" || name != "blocking" {
		t.Errorf("setDefault gave %d, %d, %s, %q, %q; want 5, -3, 1s, \"refusing\", \"blocking\"", n, set, d, s, name)
	}
}

// TestSinksConfigValidate checks the sinks benchmark's configuration: the
// defaults pass, and the backlog must be even, the runs at least one, with
// the messages the delivery benchmark gives.
func TestSinksConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     SinksConfig
		wantErr string
	}{
		{"defaults", SinksConfig{}, ""},
		{"odd events", SinksConfig{Events: 1001}, "events 1001: must be an even number, at least 2 (the filter passes half)"},
		{"negative events", SinksConfig{Events: -2}, "events -2: must be an even number, at least 2 (the filter passes half)"},
		{"negative runs", SinksConfig{Runs: -1}, "runs -1: must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if got := errString(err); got != tt.wantErr {
				t.Errorf("Validate() = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
