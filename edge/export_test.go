package edge

import "crypto/x509"

// Pool returns a pool holding the CA, for clients.
func (ca *DevCA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}
