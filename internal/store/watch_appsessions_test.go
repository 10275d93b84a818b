package store_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store"
)

// TestWatchAppSessionEnds: a revoked session and one a newer login
// evicts are reported; records and refreshes are not.
func TestWatchAppSessionEnds(t *testing.T) {
	e, clock := newSessionEnv(t, store.Config{Limits: store.Limits{AppSessions: 2}})
	account, err := e.store.CreateAccount(e.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ends, err := e.store.WatchAppSessionEnds(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		a, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
		clock.Advance(time.Second)
	}
	if _, err := e.store.RefreshAppSession(e.ctx, account.ID, ids[1], time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.DeleteAppSession(e.ctx, account.ID, ids[1]); err != nil {
		t.Fatal(err)
	}
	// Two more logins: the second evicts the first session.
	for range 2 {
		if _, err := e.store.RecordAppSession(e.ctx, account.ID, appSession(clock)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{ids[1], ids[0]} {
		select {
		case end := <-ends:
			if end != (store.AppSessionEnd{AccountID: account.ID, ID: want}) {
				t.Fatalf("end %+v, want %s of %s", end, want, account.ID)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no end of %s reported", want)
		}
	}
	select {
	case end := <-ends:
		t.Fatalf("unexpected end %+v", end)
	case <-time.After(100 * time.Millisecond):
	}
}
