package apiconv

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkAdmission admits and releases small requests of eight accounts
// at once, as the front door does for each ingest request.
func BenchmarkAdmission(b *testing.B) {
	door := newAdmission(DoorConfig{MaxInFlight: 1 << 20, MaxAccountInFlight: 1 << 20, MaxBytesInFlight: 1 << 40, MaxAccountBytesInFlight: 1 << 40})
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		account := "ac_" + strconv.FormatInt(next.Add(1)%8, 10)
		for pb.Next() {
			t, r := door.admit(account, firstGrant(4096, 10<<20))
			if r != admitted {
				b.Errorf("refused: %v", r)
				return
			}
			t.Release()
		}
	})
}
