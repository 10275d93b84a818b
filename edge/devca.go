package edge

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/atomicfile"
)

// DevCA is the certificate authority of a --dev edge: made once, kept in
// the data directory, so that an agent on the same machine trusts the
// edge with one file (ca.pem). It signs the agents' listener's
// certificate, and, on demand, one for each name the public HTTPS
// listener is asked for. It is for development only: its key sits in the
// data directory.
type DevCA struct {
	cert *x509.Certificate
	key  crypto.Signer
	// PEM is the CA's certificate, PEM-encoded.
	PEM []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate // by server name
}

// DevCAFile and devCAKeyFile are the files of a DevCA in its directory.
const (
	DevCAFile    = "ca.pem"
	devCAKeyFile = "ca-key.pem"
)

// LoadOrCreateDevCA returns the CA kept in dir, making it (and dir) the
// first time.
func LoadOrCreateDevCA(dir string) (*DevCA, error) {
	certPEM, certErr := os.ReadFile(filepath.Join(dir, DevCAFile))
	keyPEM, keyErr := os.ReadFile(filepath.Join(dir, devCAKeyFile))
	if certErr == nil && keyErr == nil {
		return parseDevCA(certPEM, keyPEM)
	}
	if !errors.Is(certErr, fs.ErrNotExist) && certErr != nil {
		return nil, fmt.Errorf("reading the dev CA: %w", certErr)
	}
	if !errors.Is(keyErr, fs.ErrNotExist) && keyErr != nil {
		return nil, fmt.Errorf("reading the dev CA's key: %w", keyErr)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "sluice dev CA", Organization: []string{"sluice --dev"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("making the dev CA: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making %s: %w", dir, err)
	}
	// The key first: a CA file without its key would be read back as
	// broken.
	if err := atomicfile.Write(filepath.Join(dir, devCAKeyFile), keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, DevCAFile), certPEM, 0o644); err != nil {
		return nil, err
	}
	return parseDevCA(certPEM, keyPEM)
}

func parseDevCA(certPEM, keyPEM []byte) (*DevCA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("the dev CA's files are not PEM: remove ca.pem and ca-key.pem for sluice to make a new CA")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the dev CA: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the dev CA's key: %w", err)
	}
	return &DevCA{cert: cert, key: key, PEM: certPEM, leaves: make(map[string]*tls.Certificate)}, nil
}

// Issue returns a certificate for names (DNS names or IP addresses),
// valid for a year.
func (ca *DevCA) Issue(names ...string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issuing a dev certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, ca.cert.Raw}, PrivateKey: key}, nil
}

// maxDevLeaves bounds the certificates a DevCA keeps made.
const maxDevLeaves = 4096

// GetCertificate returns a certificate for the server name of hello,
// made the first time it is asked, if allow reports the name is served.
func (ca *DevCA) GetCertificate(allow func(name string) bool) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		name := hello.ServerName
		if name == "" || !allow(name) {
			return nil, fmt.Errorf("no endpoint is served at %q", name)
		}
		ca.mu.Lock()
		defer ca.mu.Unlock()
		if c, ok := ca.leaves[name]; ok {
			return c, nil
		}
		c, err := ca.Issue(name)
		if err != nil {
			return nil, err
		}
		if len(ca.leaves) >= maxDevLeaves {
			clear(ca.leaves)
		}
		ca.leaves[name] = &c
		return &c, nil
	}
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
