package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and localhost
// and its key into dir, as PEM files, and returns their paths and a pool
// that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "sluice test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func writePEM(t *testing.T, path, blockType string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeTLS serves HTTPS with a certificate made for the test: a client
// that trusts it gets answers, the API's URLs say https, and plain HTTP is
// refused.
func TestServeTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sluice serve")
	}
	clearSluiceEnv(t)
	const token = "sk_test_tls_token_0123456789"
	t.Setenv(bootstrapKeyEnv, token)
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	t.Setenv("SLUICE_TLS_CERT", certFile)
	t.Setenv("SLUICE_TLS_KEY", keyFile)
	p := startServeInProcess(t)
	if !strings.HasPrefix(p.url, "https://127.0.0.1:") {
		t.Fatalf("serve logged %q, want an https URL", p.url)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	client := &http.Client{Transport: transport}
	t.Cleanup(transport.CloseIdleConnections)

	do := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Service-Version", "2")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(out)
	}
	// A worker is ready once its routes are reconciled, a moment after it
	// serves.
	resp, body := do(http.MethodGet, readyzPath, "")
	for deadline := time.Now().Add(10 * time.Second); resp.StatusCode == http.StatusServiceUnavailable && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // polling readiness, with a deadline
		resp, body = do(http.MethodGet, readyzPath, "")
	}
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Fatalf("GET %s over TLS: %d %s (TLS: %v)", readyzPath, resp.StatusCode, body, resp.TLS != nil)
	}
	resp, body = do(http.MethodPost, "/event_destinations", `{"target": {"kinesis": {"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/edge", "auth": {"creds": {"aws_access_key_id": "AKIAEXAMPLE", "aws_secret_access_key": "secret"}}}}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating a destination over TLS: %d %s", resp.StatusCode, body)
	}
	var created struct{ URI string }
	if err := json.Unmarshal([]byte(body), &created); err != nil || !strings.HasPrefix(created.URI, p.url+"/event_destinations/") {
		t.Errorf("the new destination's uri is %q (%v), want it under %s", created.URI, err, p.url)
	}

	// Plain HTTP to the HTTPS port gets Go's 400, not the API.
	plain := "http://" + strings.TrimPrefix(p.url, "https://")
	if code, body := request(t, http.MethodGet, plain+readyzPath, "", ""); code != http.StatusBadRequest {
		t.Errorf("plain HTTP to the HTTPS listener: %d %s, want 400", code, body)
	}
}

// TestServeTLSFilesCheckedAtStart stops serve at once, naming the flags,
// when a certificate or key file is missing or they do not go together.
func TestServeTLSFilesCheckedAtStart(t *testing.T) {
	clearSluiceEnv(t)
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	otherCert, _, _ := selfSigned(t, t.TempDir())
	tests := []struct {
		name, cert, key, wantErr string
	}{
		{name: "missing cert", cert: filepath.Join(dir, "missing.pem"), key: keyFile, wantErr: "--tls-cert " + filepath.Join(dir, "missing.pem") + " and --tls-key " + keyFile + ": open "},
		{name: "missing key", cert: certFile, key: filepath.Join(dir, "missing.pem"), wantErr: "no such file or directory"},
		{name: "key of another certificate", cert: otherCert, key: keyFile, wantErr: "private key does not match public key"},
		{name: "key as the certificate", cert: keyFile, key: keyFile, wantErr: "give a PEM certificate"},
		{name: "cert without key", cert: certFile, wantErr: "--tls-cert needs --tls-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"serve", "--data-dir", t.TempDir(), "--http", "127.0.0.1:0", "--tls-cert", tt.cert}
			if tt.key != "" {
				args = append(args, "--tls-key", tt.key)
			}
			_, stderr, err := runSluice(t, "", args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("sluice serve with --tls-cert %s --tls-key %s: error %v, want one containing %q\n%s", tt.cert, tt.key, err, tt.wantErr, stderr)
			}
		})
	}
}
