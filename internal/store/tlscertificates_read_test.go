package store_test

import (
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
)

// TestTLSCertificatesFollowed: a domain's certificate is read by its
// account only, followed by a watch, and deleted with its domain, which
// the watch tells.
func TestTLSCertificatesFollowed(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	d, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "*.apps.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen = make(map[string]*store.TLSCertificate)
	)
	go e.store.Certificates().FollowTLSCertificates(e.ctx, slog.New(slog.DiscardHandler), func(key string, c *store.TLSCertificate) {
		mu.Lock()
		defer mu.Unlock()
		seen[key] = c
	}, nil)
	followed := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range seen {
			if c != nil {
				n++
			}
		}
		return n, len(seen) > 0
	}

	c, err := e.store.PlantTLSCertificate(e.ctx, store.TLSCertificate{AccountID: account.ID, ReservedDomainID: d.ID, CertificatePEM: "chain", PrivateKeyPEM: "key"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.store.GetTLSCertificate(e.ctx, account.ID, c.ID); err != nil || got.PrivateKeyPEM != "key" {
		t.Fatalf("GetTLSCertificate: %+v, %v", got, err)
	}
	if _, err := e.store.GetTLSCertificate(e.ctx, other.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another account's GetTLSCertificate: %v, want ErrNotFound", err)
	}
	if list, _, err := e.store.ListTLSCertificates(e.ctx, account.ID, store.Page{}); err != nil || len(list) != 1 {
		t.Errorf("ListTLSCertificates: %d, %v", len(list), err)
	}
	check.Eventually(t, 10*time.Second, "the watch telling the certificate", func() (int, bool) {
		n, _ := followed()
		return n, n == 1
	})

	if _, err := e.store.DeleteReservedDomain(e.ctx, account.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GetTLSCertificate(e.ctx, account.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the certificate of a deleted domain: %v, want ErrNotFound", err)
	}
	check.Eventually(t, 10*time.Second, "the watch telling the delete", func() (int, bool) {
		n, _ := followed()
		return n, n == 0
	})
}
