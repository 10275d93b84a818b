package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// certificateEvents builds one event per change, its data "<change>
// <certificate id> <domain id>", and fails when the domain it is given
// is not the one stored.
func certificateEvents(account string) store.CertificateEvents {
	return func(change string, cert store.TLSCertificate, d store.ReservedDomain) ([]schemas.Encoded, error) {
		if d.CertificateID != cert.ID || d.CertStatus == nil || d.CertStatus.ProvisioningJob != nil {
			return nil, fmt.Errorf("the events were given the domain %+v as it was before", d)
		}
		name := change + " " + cert.ID + " " + d.ID
		return []schemas.Encoded{{ID: schemas.NewID(schemas.PrefixEvent), Type: "tls_certificate_" + change + ".v0", AccountID: account, Data: []byte(fmt.Sprintf("%q", name))}}, nil
	}
}

// TestDomainCertificate: a certificate stored for a domain is a TLS
// certificate the domain names, with its events; a renewal keeps its id
// and creation time; the account's list and get show it, another account
// finds it not; a job recorded clears renews_at; the domain's delete
// deletes its certificate; a domain whose policy is null takes none.
func TestDomainCertificate(t *testing.T) {
	e := newEnv(t)
	account := e.createAccount(t, "team")
	other := e.createAccount(t, "other team")
	d, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "*.apps.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	renews := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	issued := store.IssuedCertificate{CertificatePEM: "chain 1", PrivateKeyPEM: "key 1", PrivateKeyType: store.KeyTypeECDSA, IssuedAt: renews.Add(-60 * 24 * time.Hour), RenewsAt: renews}
	first, err := e.store.Certificates().SetDomainCertificate(e.ctx, account.ID, d.ID, d.CertStatus.ProvisioningJob.StartedAt, issued, certificateEvents(account.ID))
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.store.GetReservedDomain(e.ctx, account.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CertificateID != first.ID || got.CertStatus.ProvisioningJob != nil || !got.CertStatus.RenewsAt.Equal(renews) {
		t.Fatalf("the domain after its certificate: %+v, status %+v", got, got.CertStatus)
	}

	issued.CertificatePEM, issued.PrivateKeyPEM, issued.RenewsAt = "chain 2", "key 2", renews.Add(time.Hour)
	second, err := e.store.Certificates().SetDomainCertificate(e.ctx, account.ID, d.ID, time.Time{}, issued, certificateEvents(account.ID))
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != first.ID || !second.CreatedAt.Equal(first.CreatedAt) || second.CertificatePEM != "chain 2" {
		t.Errorf("the renewal is %+v; want the certificate %s renewed", second, first.ID)
	}
	want := []string{"created " + first.ID + " " + d.ID, "updated " + first.ID + " " + d.ID}
	if pending := e.pending(t); fmt.Sprint(pending) != fmt.Sprint(want) {
		t.Errorf("pending audit events %q, want %q", pending, want)
	}
	list, _, err := e.store.ListTLSCertificates(e.ctx, account.ID, store.Page{})
	if err != nil || len(list) != 1 || list[0].PrivateKeyPEM != "key 2" {
		t.Fatalf("ListTLSCertificates: %v, %+v", err, list)
	}
	if _, err := e.store.GetTLSCertificate(e.ctx, other.ID, first.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another account's GetTLSCertificate: %v, want ErrNotFound", err)
	}

	job := store.CertificateJob{Msg: "renewing", StartedAt: renews}
	if err := e.store.Certificates().SetDomainCertificateJob(e.ctx, account.ID, d.ID, time.Time{}, job); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.store.GetReservedDomain(e.ctx, account.ID, d.ID); got.CertStatus.RenewsAt != nil || got.CertStatus.ProvisioningJob.Msg != "renewing" || got.CertificateID != first.ID {
		t.Errorf("while a job runs, the status is %+v, certificate %q", got.CertStatus, got.CertificateID)
	}

	if _, err := e.store.DeleteReservedDomain(e.ctx, account.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.GetTLSCertificate(e.ctx, account.ID, first.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the certificate of a deleted domain: %v, want ErrNotFound", err)
	}

	plain, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "plain.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Certificates().SetDomainCertificate(e.ctx, account.ID, plain.ID, time.Time{}, issued, certificateEvents(account.ID)); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Errorf("a certificate for a domain without a policy: %v, want ErrCertificateUnmanaged", err)
	}
	if err := e.store.Certificates().SetDomainCertificateJob(e.ctx, account.ID, plain.ID, time.Time{}, job); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Errorf("a job of a domain without a policy: %v, want ErrCertificateUnmanaged", err)
	}
}

// TestDomainCertificateJobReplaced: a job that started from a policy
// the user then changes, or sends again after a DNS_ERROR or while it
// waits for a DNS record, records
// nothing more: its job's and its certificate's writes are refused with
// ErrCertificateUnmanaged, the new job's are taken. The new job starts at
// the store's clock, after the old one even when that clock has not
// moved.
func TestDomainCertificateJobReplaced(t *testing.T) {
	clock := check.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	e := newEnvWith(t, store.Config{Clock: clock.Now})
	account := e.createAccount(t, "team")
	d, err := e.store.CreateReservedDomain(e.ctx, account.ID, store.ReservedDomain{Domain: "*.apps.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	old := d.CertStatus.ProvisioningJob.StartedAt
	if !old.Equal(clock.Now()) {
		t.Fatalf("a new job started at %s, want the store's clock, %s", old, clock.Now())
	}
	issued := store.IssuedCertificate{CertificatePEM: "chain", PrivateKeyPEM: "key", PrivateKeyType: store.KeyTypeECDSA, IssuedAt: old, RenewsAt: old.Add(60 * 24 * time.Hour)}
	for _, tt := range []struct {
		name    string
		advance time.Duration
		change  func(p *store.CertificatePolicy)
		before  string // the old job's error_code before the change
		waiting bool   // whether the old job waits for a record, with a retries_at
	}{
		{"key type changed", time.Minute, func(p *store.CertificatePolicy) { p.PrivateKeyType = store.KeyTypeRSA }, "", false},
		{"sent again after DNS_ERROR", time.Minute, func(*store.CertificatePolicy) {}, store.CertErrorDNS, false},
		{"sent again while waiting for a record", time.Minute, func(*store.CertificatePolicy) {}, "", true},
		{"changed at the same instant", 0, func(p *store.CertificatePolicy) { p.PrivateKeyType = store.KeyTypeECDSA }, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := store.CertificateJob{Msg: "ordering", StartedAt: old, Attempts: 1, ErrorCode: tt.before}
			if tt.waiting {
				at := clock.Now().Add(time.Hour)
				job.RetriesAt = &at
			}
			if err := e.store.Certificates().SetDomainCertificateJob(e.ctx, account.ID, d.ID, old, job); err != nil {
				t.Fatal(err)
			}
			clock.Advance(tt.advance)
			changed, err := e.store.UpdateReservedDomain(e.ctx, account.ID, d.ID, func(d *store.ReservedDomain) error {
				p := *d.CertPolicy
				tt.change(&p)
				d.CertPolicy = &p
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			started := changed.CertStatus.ProvisioningJob.StartedAt
			if !started.After(old) || (tt.advance > 0 && !started.Equal(clock.Now())) {
				t.Fatalf("the new job started at %s; want the store's clock %s, after the old job's %s", started, clock.Now(), old)
			}
			job.ErrorCode = ""
			if err := e.store.Certificates().SetDomainCertificateJob(e.ctx, account.ID, d.ID, old, job); !errors.Is(err, store.ErrCertificateUnmanaged) {
				t.Errorf("the old job's SetDomainCertificateJob: %v, want ErrCertificateUnmanaged", err)
			}
			if _, err := e.store.Certificates().SetDomainCertificate(e.ctx, account.ID, d.ID, old, issued, certificateEvents(account.ID)); !errors.Is(err, store.ErrCertificateUnmanaged) {
				t.Errorf("the old job's SetDomainCertificate: %v, want ErrCertificateUnmanaged", err)
			}
			if got, _ := e.store.GetReservedDomain(e.ctx, account.ID, d.ID); got.CertificateID != "" || got.CertStatus.ProvisioningJob == nil || !got.CertStatus.ProvisioningJob.StartedAt.Equal(started) {
				t.Fatalf("after the old job's writes, certificate %q, status %+v; want the new job's", got.CertificateID, got.CertStatus)
			}
			job.StartedAt = started
			if err := e.store.Certificates().SetDomainCertificateJob(e.ctx, account.ID, d.ID, started, job); err != nil {
				t.Errorf("the new job's SetDomainCertificateJob: %v", err)
			}
			old = started
		})
	}
	if _, err := e.store.Certificates().SetDomainCertificate(e.ctx, account.ID, d.ID, old, issued, certificateEvents(account.ID)); err != nil {
		t.Fatalf("the last job's SetDomainCertificate: %v", err)
	}
	// A renewal, with no job recorded yet, names none (zero); once a
	// policy change started a job, it is refused.
	if _, err := e.store.UpdateReservedDomain(e.ctx, account.ID, d.ID, func(d *store.ReservedDomain) error {
		d.CertPolicy = &store.CertificatePolicy{PrivateKeyType: store.KeyTypeRSA}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	renewal := store.CertificateJob{Msg: "renewing", StartedAt: clock.Now()}
	if err := e.store.Certificates().SetDomainCertificateJob(e.ctx, account.ID, d.ID, time.Time{}, renewal); !errors.Is(err, store.ErrCertificateUnmanaged) {
		t.Errorf("a renewal's first write after a new job: %v, want ErrCertificateUnmanaged", err)
	}
}

// TestLease: one holder at a time; the holder extends it; another takes
// it once it expires.
func TestLease(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		holder string
		ttl    time.Duration
		want   bool
	}{
		{"a", 200 * time.Millisecond, true},
		{"b", time.Minute, false},
		{"a", 200 * time.Millisecond, true},
	} {
		if got, err := e.store.Certificates().TakeLease(e.ctx, "job", c.holder, c.ttl); err != nil || got != c.want {
			t.Fatalf("TakeLease(%s) = %v, %v; want %v", c.holder, got, err, c.want)
		}
	}
	check.Eventually(t, 5*time.Second, "b taking the expired lease", func() (string, bool) {
		got, err := e.store.Certificates().TakeLease(e.ctx, "job", "b", time.Minute)
		return fmt.Sprint(got, err), got && err == nil
	})
	if got, _ := e.store.Certificates().TakeLease(e.ctx, "job", "a", time.Minute); got {
		t.Error("a took the lease b holds")
	}
}

// TestHTTPChallenges: a challenge stored is answered for its domain, in
// any case, and token only, until removed; a token that is not base64url
// is refused.
func TestHTTPChallenges(t *testing.T) {
	e := newEnv(t)
	c := store.HTTPChallenge{Domain: "Shop.Example.com", Token: "tok_1-A", KeyAuthorization: "tok_1-A.thumb"}
	if err := e.store.Certificates().PutHTTPChallenge(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, err := e.store.Certificates().HTTPChallengeAnswer(e.ctx, "shop.example.COM", "tok_1-A"); err != nil || got != "tok_1-A.thumb" {
		t.Errorf("HTTPChallengeAnswer: %q, %v", got, err)
	}
	for _, q := range [][2]string{{"other.example.com", "tok_1-A"}, {"shop.example.com", "tok_1-B"}, {"shop.example.com", "../x"}} {
		if _, err := e.store.Certificates().HTTPChallengeAnswer(e.ctx, q[0], q[1]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("HTTPChallengeAnswer(%q, %q): %v, want ErrNotFound", q[0], q[1], err)
		}
	}
	if err := e.store.Certificates().RemoveHTTPChallenge(e.ctx, "shop.example.com", "tok_1-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Certificates().HTTPChallengeAnswer(e.ctx, "shop.example.com", "tok_1-A"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after its removal: %v, want ErrNotFound", err)
	}
	var invalid *store.ValidationError
	if err := e.store.Certificates().PutHTTPChallenge(e.ctx, store.HTTPChallenge{Domain: "shop.example.com", Token: "a.b"}); !errors.As(err, &invalid) {
		t.Errorf("a token with a dot: %v, want a *ValidationError", err)
	}
}
