package acme

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// BenchmarkDueDomains is what a tick does to find the jobs due, with no
// store read, in a view of 200 managed domains (20,000 reserved, one in
// 100 managed: store's BenchmarkCertificateJobs) and of 20,000 (all
// managed), none due; view-B/domain is the heap the view holds of each.
func BenchmarkDueDomains(b *testing.B) {
	for _, managed := range []int{200, 20000} {
		b.Run(fmt.Sprint(managed), func(b *testing.B) {
			m, err := New(nil, Config{Directory: "https://acme.test/dir", ServiceDomain: "sluice.test", Resolver: "127.0.0.1:53", Holder: "bench", Events: noEvents})
			if err != nil {
				b.Fatal(err)
			}
			renews := time.Now().Add(24 * time.Hour)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range managed {
				d := store.ReservedDomain{
					ID: fmt.Sprintf("rd_%d", i), AccountID: fmt.Sprintf("ac_%d", i%2000), Domain: fmt.Sprintf("app%d.example.com", i),
					CertPolicy: &store.CertificatePolicy{}, CertStatus: &store.CertificateStatus{RenewsAt: &renews},
				}
				m.jobs.apply(store.CertificateChange{Key: "reserved_domains." + d.AccountID + "." + d.ID, ReservedDomain: &d})
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			perDomain := float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc)) / float64(managed)
			for b.Loop() {
				if due := m.jobs.dueDomains(m.due); len(due) != 0 {
					b.Fatalf("%d due", len(due))
				}
			}
			b.ReportMetric(perDomain, "view-B/domain")
		})
	}
}
