package store

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/natstest"
)

// The reserved domains of BenchmarkCertificateJobs: benchDomains of
// benchAccounts accounts, one in benchManagedEvery with a policy.
const (
	benchDomains      = 20000
	benchAccounts     = 2000
	benchManagedEvery = 100
)

// BenchmarkCertificateJobs compares what the certificate jobs read from
// the store to find the jobs due, with 20,000 reserved domains of 2,000
// accounts, 200 of them managed: "scan" is what every tick read before
// (every reserved domain, listed and decoded; ManagedDomains), "follow"
// the one read of FollowCertificateJobs when the lease is taken, until
// its initial values are in; after that a tick reads nothing from the
// store (the watch brings what changes), and finds the jobs due in memory
// (package acme's BenchmarkDueDomains). B-read/op is the bytes of the
// values read. The NATS server runs in the process: B/op and allocs/op
// count its work too.
func BenchmarkCertificateJobs(b *testing.B) {
	_, js := natstest.Connect(b, natstest.Start(b))
	ctx := b.Context()
	s, err := Open(ctx, js, Config{})
	if err != nil {
		b.Fatal(err)
	}
	valueBytes := seedReservedDomains(b, s)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			all, err := listRecords[ReservedDomain](ctx, s, reservedDomains.kind+".*.*")
			if err != nil {
				b.Fatal(err)
			}
			managed := 0
			for _, d := range all {
				if d.CertPolicy != nil {
					managed++
				}
			}
			if len(all) != benchDomains || managed != benchDomains/benchManagedEvery {
				b.Fatalf("read %d domains, %d managed", len(all), managed)
			}
		}
		b.ReportMetric(float64(valueBytes), "B-read/op")
	})
	b.Run("follow", func(b *testing.B) {
		for b.Loop() {
			followOnce(b, s)
		}
		b.ReportMetric(float64(valueBytes), "B-read/op")
	})
}

// followOnce runs FollowCertificateJobs until its initial values are in.
func followOnce(b *testing.B, s *Store) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	ready := make(chan struct{})
	done := make(chan struct{})
	managed := 0
	go func() {
		defer close(done)
		s.Certificates().FollowCertificateJobs(ctx, slog.New(slog.DiscardHandler), func(c CertificateChange) {
			if c.ReservedDomain != nil && c.ReservedDomain.CertPolicy != nil {
				managed++
			}
		}, func() { close(ready) })
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		b.Fatal("no ready after a minute")
	}
	cancel()
	<-done
	if managed != benchDomains/benchManagedEvery {
		b.Fatalf("followed %d managed domains", managed)
	}
}

// seedReservedDomains writes the benchmark's reserved domains straight
// into the bucket, as the store encodes them, and returns the bytes of
// their values.
func seedReservedDomains(b *testing.B, s *Store) int {
	var total int
	var writes []write
	flush := func() {
		if _, err := s.commitBatch(b.Context(), writes); err != nil {
			b.Fatal(err)
		}
		writes = writes[:0]
	}
	created := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for i := range benchDomains {
		account := fmt.Sprintf("ac_bench%019d", i%benchAccounts)
		d := ReservedDomain{
			ID: fmt.Sprintf("rd_bench%019d", i), AccountID: account, CreatedAt: created,
			Domain: fmt.Sprintf("app%d.customer%d.example.com", i, i%benchAccounts),
			Tree:   []string{fmt.Sprintf("customer%d.example.com", i%benchAccounts)},
		}
		if i%benchManagedEvery == 0 {
			d.CertPolicy = &CertificatePolicy{Authority: AuthorityLetsEncrypt, PrivateKeyType: KeyTypeECDSA}
			d.CertStatus = &CertificateStatus{ProvisioningJob: &CertificateJob{Msg: "certificate provisioning is in progress", StartedAt: created}}
		}
		value, err := json.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		total += len(value)
		writes = append(writes, write{key: reservedDomains.key(account, d.ID), value: value})
		if len(writes) == 900 {
			flush()
		}
	}
	if len(writes) > 0 {
		flush()
	}
	return total
}
