// Package promreg registers a component's Prometheus metrics.
package promreg

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers each collector with reg in turn, none when reg is
// nil, and returns the first error, "registering <what> metrics: …",
// such as a metric of the same name registered already.
func Register(reg prometheus.Registerer, what string, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering %s metrics: %w", what, err)
		}
	}
	return nil
}
