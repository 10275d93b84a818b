package store

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// TestEvictSkipsRefreshed: a session picked for eviction and refreshed
// before the eviction's delete is kept, as its user is active: the
// record that makes room picks again.
func TestEvictSkipsRefreshed(t *testing.T) {
	s, ctx := newFamilyTestStore(t)
	account, err := s.CreateAccount(ctx, "team")
	if err != nil {
		t.Fatal(err)
	}
	picked, err := s.RecordAppSession(ctx, account.ID, AppSession{
		PublicURL:         "https://app.example.com",
		BrowserSession:    BrowserSession{IPAddress: "192.0.2.1"},
		ApplicationUserID: schemas.NewID(schemas.PrefixAppUser),
		EndpointID:        schemas.NewID(schemas.PrefixEndpoint),
		ExpiresAt:         time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshAppSession(ctx, account.ID, picked.ID, picked.LastActive.Add(time.Second), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := s.evict(ctx, picked); err != nil {
		t.Fatalf("evict: %v", err)
	}
	if _, err := s.GetAppSession(ctx, account.ID, picked.ID); err != nil {
		t.Fatalf("the session refreshed after it was picked: %v, want it kept", err)
	}
	latest, err := s.GetAppSession(ctx, account.ID, picked.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.evict(ctx, latest); err != nil {
		t.Fatalf("evict: %v", err)
	}
	if _, err := s.GetAppSession(ctx, account.ID, picked.ID); err == nil {
		t.Fatal("the session picked as it is: kept, want evicted")
	}
}
