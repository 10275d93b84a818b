package promreg

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegister(t *testing.T) {
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_a_total", Help: "a"})
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_b_total", Help: "b"})
	if err := Register(nil, "test", a, b); err != nil {
		t.Fatalf("Register with no registry: %v", err)
	}
	reg := prometheus.NewRegistry()
	if err := Register(reg, "test", a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := reg.Gather(); len(got) != 2 {
		t.Errorf("registered %d metrics, want 2", len(got))
	}
	again := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_a_total", Help: "a"})
	if err := Register(reg, "the test's", again); err == nil || !strings.HasPrefix(err.Error(), "registering the test's metrics: ") {
		t.Errorf("registering a metric of a name taken: %v, want an error naming what it registered", err)
	}
}
