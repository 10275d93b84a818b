package agentconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

const (
	mergeA = `version: 2
authtoken: aaaaaaaa
log_level: info
web_allow_hosts: [a.example.com, b.example.com]
tunnels:
  web:
    proto: http
    addr: 3000
    schemes: [https, http]
    description: from a
  db:
    proto: tcp
    addr: 5432
`
	mergeB = `log_level: debug
web_allow_hosts: [c.example.com]
metadata:
tunnels:
  web:
    addr: 4000
    basic_auth: ['ann:password1']
  api:
    proto: http
    addr: 5000
`
	mergeC = `version: "2"
authtoken: cccccccc
tunnels:
  web:
    schemes: [http]
`
)

// TestLoadMerge merges files in order: scalars overridden, mappings
// merged by key (the top level, tunnels, a tunnel's keys), lists
// replaced, empty values ignored.
func TestLoadMerge(t *testing.T) {
	web := Tunnel{Name: "web", Proto: "http", Addr: "http://localhost:4000", Inspect: true,
		Schemes: []string{"https", "http"}, Description: "from a", BasicAuth: []string{"ann:password1"}}
	db := Tunnel{Name: "db", Proto: "tcp", Addr: "localhost:5432"}
	api := Tunnel{Name: "api", Proto: "http", Addr: "http://localhost:5000", Inspect: true, Schemes: []string{"https", "http"}}
	for _, c := range []struct {
		name      string
		files     []string
		authtoken string
		web       Tunnel
	}{
		{"two", []string{"a.yml", "b.yml"}, "aaaaaaaa", web},
		{"three", []string{"a.yml", "b.yml", "c.yml"}, "cccccccc", func() Tunnel { w := web; w.Schemes = []string{"http"}; return w }()},
	} {
		t.Run(c.name, func(t *testing.T) {
			inDir(t, map[string]string{"a.yml": mergeA, "b.yml": mergeB, "c.yml": mergeC})
			cfg, err := Load(c.files)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Authtoken != c.authtoken || cfg.LogLevel != "debug" || !slices.Equal(cfg.WebAllowHosts, []string{"c.example.com"}) {
				t.Errorf("top level: %+v", cfg)
			}
			want := map[string]Tunnel{"web": c.web, "db": db, "api": api}
			if !reflect.DeepEqual(cfg.Tunnels, want) {
				t.Errorf("tunnels:\n got  %+v\n want %+v", cfg.Tunnels, want)
			}
			if !slices.Equal(cfg.Files, c.files) {
				t.Errorf("Files = %v", cfg.Files)
			}
		})
	}
}

// TestLoadMergeErrorPositions names the file a wrong value is in, and
// checks a tunnel's keys only once merged.
func TestLoadMergeErrorPositions(t *testing.T) {
	inDir(t, map[string]string{
		"a.yml": "version: 2\ntunnels:\n  web:\n    proto: tcp\n    addr: 22\n",
		"b.yml": "tunnels:\n  web:\n    proto: http\n    domain: a_b.example.com\n",
	})
	_, err := Load([]string{"a.yml", "b.yml"})
	wantError(t, err, "b.yml:4:13: tunnels.web.domain: ", "'_'")
	_, err = Load([]string{"b.yml"})
	wantError(t, err, "b.yml:1:1: version: is required")
}

// TestLoadRootCAs takes a PEM file relative to the file that names it,
// and refuses one without a certificate.
func TestLoadRootCAs(t *testing.T) {
	inDir(t, map[string]string{
		"conf/a.yml":           "version: 2\nroot_cas: certs/ca.pem\n",
		"conf/certs/ca.pem":    string(testCert(t)),
		"conf/b.yml":           "version: 2\nroot_cas: certs/empty.pem\n",
		"conf/certs/empty.pem": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	})
	cfg, err := Load([]string{"conf/a.yml"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("conf", "certs", "ca.pem"); cfg.RootCAs != want {
		t.Errorf("RootCAs = %q; want %q", cfg.RootCAs, want)
	}
	_, err = Load([]string{"conf/b.yml"})
	wantError(t, err, "conf/b.yml:2:11: root_cas: ", "no PEM certificate")
}

// testCert returns a self-signed certificate in PEM.
func testCert(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
