package edge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/internal/store"
)

// Certificates is the table of the TLS certificates sluice obtained for
// reserved domains, which the public HTTPS listener serves by SNI: the
// certificate of the exact name, else that of the wildcard one label up
// (*.example.com for a.example.com), as a TLS client matches names. A
// lookup is two map reads, whatever the number of certificates; a renewal
// replaces the certificate the next handshake gets.
//
// Apply keeps it current (from store.Certificates.FollowTLSCertificates); it is safe
// for concurrent use.
type Certificates struct {
	mu sync.RWMutex
	// byKey are the names each certificate of the store serves, by its
	// key, to take them out when it changes or goes.
	byKey map[string][]string
	// byName are the certificates by name: an exact name, or a wildcard
	// such as "*.example.com".
	byName map[string]servedCertificate
}

type servedCertificate struct {
	key  string // the store's key of the certificate
	cert *tls.Certificate
}

// NewCertificates returns an empty table.
func NewCertificates() *Certificates {
	return &Certificates{byKey: make(map[string][]string), byName: make(map[string]servedCertificate)}
}

// Apply takes one change of the store's certificates: the certificate
// with the key, or nil when it is gone. A certificate whose chain or key
// cannot be loaded is taken out, and Apply returns why (an error that
// names no key material).
func (c *Certificates) Apply(key string, cert *store.TLSCertificate) error {
	var (
		loaded *tls.Certificate
		err    error
	)
	if cert != nil {
		loaded, err = loadCertificate(cert)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range c.byKey[key] {
		if c.byName[name].key == key {
			delete(c.byName, name)
		}
	}
	delete(c.byKey, key)
	if loaded == nil {
		return err
	}
	names := loaded.Leaf.DNSNames
	c.byKey[key] = names
	for _, name := range names {
		c.byName[name] = servedCertificate{key: key, cert: loaded}
	}
	return nil
}

// loadCertificate parses the chain and key of cert, and lower-cases the
// leaf's names.
func loadCertificate(cert *store.TLSCertificate) (*tls.Certificate, error) {
	loaded, err := tls.X509KeyPair([]byte(cert.CertificatePEM), []byte(cert.PrivateKeyPEM))
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s: loading its chain and key: %w", cert.ID, err)
	}
	if loaded.Leaf == nil {
		if loaded.Leaf, err = x509.ParseCertificate(loaded.Certificate[0]); err != nil {
			return nil, fmt.Errorf("TLS certificate %s: %w", cert.ID, err)
		}
	}
	if len(loaded.Leaf.DNSNames) == 0 {
		return nil, fmt.Errorf("TLS certificate %s: %w", cert.ID, errNoNames)
	}
	for i, name := range loaded.Leaf.DNSNames {
		loaded.Leaf.DNSNames[i] = strings.ToLower(name)
	}
	return &loaded, nil
}

var errNoNames = errors.New("its leaf has no DNS names to serve it for")

// Lookup returns the certificate of the server name: that of the name
// itself, else that of the wildcard of its parent; false if none.
func (c *Certificates) Lookup(serverName string) (*tls.Certificate, bool) {
	name := strings.ToLower(strings.TrimSuffix(serverName, "."))
	c.mu.RLock()
	defer c.mu.RUnlock()
	if served, ok := c.byName[name]; ok {
		return served.cert, true
	}
	if _, parent, ok := strings.Cut(name, "."); ok && strings.Contains(parent, ".") {
		if served, ok := c.byName["*."+parent]; ok {
			return served.cert, true
		}
	}
	return nil, false
}

// Len returns how many certificates the table holds.
func (c *Certificates) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byKey)
}

// GetCertificate returns a tls.Config's GetCertificate that serves the
// table's certificate of the client's server name, and otherwise
// fallback's answer (nil: none, so that the tls.Config's Certificates
// are served).
func (c *Certificates) GetCertificate(fallback func(*tls.ClientHelloInfo) (*tls.Certificate, error)) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if cert, ok := c.Lookup(hello.ServerName); ok {
			return cert, nil
		}
		if fallback != nil {
			return fallback(hello)
		}
		return nil, nil
	}
}
