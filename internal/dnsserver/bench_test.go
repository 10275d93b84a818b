package dnsserver_test

import (
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/dnsserver"
	"github.com/sluicehq/sluice/internal/store"
)

// BenchmarkUDPQueries measures the queries a second one server answers
// over UDP on the loopback, an A query of a region domain each, from 4
// clients per CPU, each sending its next query once it has its answer:
// the server's answer (a read lock, a few map lookups) and the kernel's
// UDP round trip, with the clients on the same CPUs. docs/performance.md
// has the figures.
func BenchmarkUDPQueries(b *testing.B) {
	e := start(b, dnsserver.Config{})
	if _, err := e.store.CreateAgentIngress(e.ctx, e.account, store.AgentIngress{Domain: "ingress.example.com"}); err != nil {
		b.Fatal(err)
	}
	const name = "tunnel.us.ingress.example.com."
	check.Eventually(b, 10*time.Second, "the agent ingress served", func() (string, bool) {
		resp, err := e.ask("udp", name, dns.TypeA, nil)
		if err != nil {
			return err.Error(), false
		}
		return summary(resp).String(), len(resp.Answer) == 1
	})
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := dns.Dial("udp", e.addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		q := new(dns.Msg)
		q.SetQuestion(name, dns.TypeA)
		for pb.Next() {
			q.Id = dns.Id()
			if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
				b.Error(err)
				return
			}
			if err := conn.WriteMsg(q); err != nil {
				b.Error(err)
				return
			}
			resp, err := conn.ReadMsg()
			if err != nil {
				b.Error(err)
				return
			}
			if resp.Id != q.Id || len(resp.Answer) != 1 {
				b.Errorf("answer %d to query %d: %v", resp.Id, q.Id, resp)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
