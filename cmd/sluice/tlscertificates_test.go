package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestTLSCertificatesCommands runs `sluice tls-certificates` against the
// API, on a certificate sluice's jobs stored: list and get, without its
// key, and no create, update or delete.
func TestTLSCertificatesCommands(t *testing.T) {
	e := newCLIEnv(t)
	st, account := e.stack.Store, e.stack.AccountID
	d, err := st.CreateReservedDomain(t.Context(), account, store.ReservedDomain{Domain: "*.apps.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	noEvents := func(string, store.TLSCertificate, store.ReservedDomain) ([]schemas.Encoded, error) { return nil, nil }
	cert, err := st.Certificates().SetDomainCertificate(t.Context(), account, d.ID, d.CertStatus.ProvisioningJob.StartedAt, store.IssuedCertificate{
		CertificatePEM: "not a chain", PrivateKeyPEM: "secret key", PrivateKeyType: store.KeyTypeECDSA,
		IssuedAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), RenewsAt: time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC),
	}, noEvents)
	if err != nil {
		t.Fatal(err)
	}

	rows := tableRows(t, e.must("tls-certificates", "list"), "ID", "CREATED_AT", "NAMES", "NOT_AFTER", "ISSUER")
	if len(rows) != 1 || rows[0][0] != cert.ID {
		t.Errorf("tls-certificates list: %v", rows)
	}
	out := e.must("tls-certificates", "get", cert.ID)
	if field(out, "ISSUED_AT") != "2030-01-01T00:00:00.000Z" || field(out, "PRIVATE_KEY_TYPE") != "ecdsa" || strings.Contains(out, "secret key") {
		t.Errorf("tls-certificates get printed:\n%s", out)
	}
	for _, cmd := range [][]string{{"tls-certificates", "create"}, {"tls-certificates", "update"}, {"tls-certificates", "delete"}} {
		help, _, err := e.run(cmd...)
		check.ErrorContains(t, err, "")
		if !strings.Contains(help, "Available Commands:") || strings.Contains(help, "\n  "+cmd[1]+" ") {
			t.Errorf("%s printed:\n%s", strings.Join(cmd, " "), help)
		}
	}
}
