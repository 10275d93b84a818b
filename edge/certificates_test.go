package edge

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// issueTestCertificate returns a self-signed certificate of names, as the
// store keeps one; serial tells two of the same names apart.
func issueTestCertificate(t testing.TB, serial int64, names ...string) *store.TLSCertificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(90 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &store.TLSCertificate{
		ID:             fmt.Sprintf("cert_%d", serial),
		CertificatePEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		PrivateKeyPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
		PrivateKeyType: store.KeyTypeECDSA,
	}
}

// served returns the serial of the certificate the table serves for the
// name, 0 for none.
func served(c *Certificates, name string) int64 {
	cert, ok := c.Lookup(name)
	if !ok {
		return 0
	}
	return cert.Leaf.SerialNumber.Int64()
}

// TestCertificatesBySNI: the exact name before the wildcard, a wildcard
// one label deep only, names matched without case or a final dot, a
// renewal served at once, and a deleted certificate served no more.
func TestCertificatesBySNI(t *testing.T) {
	c := NewCertificates()
	for key, cert := range map[string]*store.TLSCertificate{
		"tls_certificates.a.wild":  issueTestCertificate(t, 1, "*.example.com", "example.com"),
		"tls_certificates.b.exact": issueTestCertificate(t, 2, "api.example.com"),
	} {
		if err := c.Apply(key, cert); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]int64{
		"api.example.com":   2,
		"API.Example.com.":  2,
		"www.example.com":   1,
		"example.com":       1,
		"a.b.example.com":   0, // a wildcard covers one label
		"other.com":         0,
		"":                  0,
		"com":               0,
		"www.example.com.x": 0,
	} {
		if got := served(c, name); got != want {
			t.Errorf("%q: served certificate %d, want %d", name, got, want)
		}
	}

	if err := c.Apply("tls_certificates.a.wild", issueTestCertificate(t, 3, "*.example.com", "example.com")); err != nil {
		t.Fatal(err)
	}
	if got := served(c, "www.example.com"); got != 3 {
		t.Errorf("after the renewal, www.example.com gets certificate %d, want 3", got)
	}
	if err := c.Apply("tls_certificates.b.exact", nil); err != nil {
		t.Fatal(err)
	}
	if got := served(c, "api.example.com"); got != 3 {
		t.Errorf("after the exact name's delete, api.example.com gets certificate %d, want the wildcard's 3", got)
	}
	if c.Len() != 1 {
		t.Errorf("Len() = %d, want 1", c.Len())
	}

	bad := issueTestCertificate(t, 4, "bad.example.org")
	bad.PrivateKeyPEM = issueTestCertificate(t, 5, "other.example.org").PrivateKeyPEM
	if err := c.Apply("tls_certificates.a.bad", bad); err == nil {
		t.Error("a certificate with another's key was taken")
	}
	if got := served(c, "bad.example.org"); got != 0 {
		t.Errorf("a certificate that did not load is served (%d)", got)
	}
}

// TestCertificatesGetCertificate: the table's certificate, else the
// fallback's, else none (the tls.Config's Certificates).
func TestCertificatesGetCertificate(t *testing.T) {
	c := NewCertificates()
	if err := c.Apply("tls_certificates.a.x", issueTestCertificate(t, 7, "app.example.com")); err != nil {
		t.Fatal(err)
	}
	fallback := &tls.Certificate{}
	get := c.GetCertificate(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return fallback, nil })
	if cert, _ := get(&tls.ClientHelloInfo{ServerName: "app.example.com"}); cert == nil || cert.Leaf.SerialNumber.Int64() != 7 {
		t.Errorf("app.example.com: got %v, want the table's certificate", cert)
	}
	if cert, _ := get(&tls.ClientHelloInfo{ServerName: "other.example.com"}); cert != fallback {
		t.Errorf("other.example.com: got %v, want the fallback's", cert)
	}
	if cert, err := c.GetCertificate(nil)(&tls.ClientHelloInfo{ServerName: "other.example.com"}); cert != nil || err != nil {
		t.Errorf("without a fallback: got %v, %v; want nil, nil", cert, err)
	}
}

// BenchmarkHandshake measures TLS handshakes a second through the table,
// with 1 and with 10,000 certificates loaded, each handshake for a name
// among them (docs/performance.md). A lookup reads two maps, so the two
// should be alike; the handshake's cryptography is nearly all of it.
func BenchmarkHandshake(b *testing.B) {
	for _, n := range []int{1, 10000} {
		c := NewCertificates()
		for i := range n {
			if err := c.Apply(fmt.Sprintf("tls_certificates.a.%d", i), issueTestCertificate(b, int64(i+1), fmt.Sprintf("*.d%d.example.com", i))); err != nil {
				b.Fatal(err)
			}
		}
		addr := serveHandshakes(b, c)
		b.Run(fmt.Sprintf("certificates=%d", n), func(b *testing.B) {
			for i := range b.N {
				name := fmt.Sprintf("www.d%d.example.com", i%n)
				conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: name, InsecureSkipVerify: true}) // the benchmark measures the server's lookup, not a chain check
				if err != nil {
					b.Fatal(err)
				}
				if got := conn.ConnectionState().PeerCertificates[0].DNSNames[0]; got != fmt.Sprintf("*.d%d.example.com", i%n) {
					b.Fatalf("%s got the certificate of %s", name, got)
				}
				_ = conn.Close()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
		})
	}
}

// BenchmarkLookup measures the table's lookup alone, by SNI, with 1 and
// 10,000 certificates loaded, names spread over them.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1, 10000} {
		c := NewCertificates()
		for i := range n {
			if err := c.Apply(fmt.Sprintf("tls_certificates.a.%d", i), issueTestCertificate(b, int64(i+1), fmt.Sprintf("*.d%d.example.com", i))); err != nil {
				b.Fatal(err)
			}
		}
		names := make([]string, 1024)
		for i := range names {
			names[i] = fmt.Sprintf("www.d%d.example.com", i%n)
		}
		b.Run(fmt.Sprintf("certificates=%d", n), func(b *testing.B) {
			for i := range b.N {
				if _, ok := c.Lookup(names[i%len(names)]); !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}

// serveHandshakes serves TLS handshakes with the table's certificates on a
// loopback port until the benchmark ends, and returns its address.
func serveHandshakes(b *testing.B, c *Certificates) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	serverCfg := &tls.Config{GetCertificate: c.GetCertificate(nil), MinVersion: tls.VersionTLS12}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = conn.Close() }()
				_ = tls.Server(conn, serverCfg).Handshake()
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkCertificateMemory measures the heap one loaded certificate
// takes in the table (an ECDSA P-256 leaf, self-signed: an issued chain
// adds its intermediate's bytes).
func BenchmarkCertificateMemory(b *testing.B) {
	const n = 10000
	certs := make([]*store.TLSCertificate, n)
	for i := range certs {
		certs[i] = issueTestCertificate(b, int64(i+1), fmt.Sprintf("*.d%d.example.com", i))
	}
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := NewCertificates()
		for i, cert := range certs {
			if err := c.Apply(fmt.Sprintf("tls_certificates.a.%d", i), cert); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/certificate")
		runtime.KeepAlive(c)
	}
}
