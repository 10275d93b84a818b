package edge

import (
	"crypto/x509"

	"github.com/prometheus/client_golang/prometheus"
)

// Pool returns a pool holding the CA, for clients.
func (ca *DevCA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// RateLimited is the counter of requests refused for their account's
// rate.
func (m *Metrics) RateLimited() prometheus.Counter { return m.rateLimited }

// ForwardedHeld is the counter of forwarded requests held here after the
// serving edge refused them for their account's rate.
func (m *Metrics) ForwardedHeld() prometheus.Counter { return m.forwardedHeld }
