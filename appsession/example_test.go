package appsession_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/appsession"
)

// The edge records a session when a user logs in, refreshes it on the
// user's requests, logs the user out once a refresh says the session has
// ended (revoked through the API, evicted or expired), and ends it when
// the user logs out.
func Example() {
	nc, err := nats.Connect("nats://127.0.0.1:4222") // the NATS server of sluice
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	sessions := appsession.New(nc)
	ctx := context.Background()

	s, err := sessions.Record(ctx, appsession.RecordRequest{
		AccountID:         "ac_2Yp4q1Kx8Zr0m3Nn7Bv5Lc9Hs1D",
		PublicURL:         "https://app.example.com",
		BrowserSession:    apiwire.BrowserSession{IPAddress: "203.0.113.7", UserAgent: apiwire.UserAgent{Raw: "Mozilla/5.0"}},
		ApplicationUserID: "usr_2Yp4q1Kx8Zr0m3Nn7Bv5Lc9Hs1D",
		EndpointID:        "ep_2Yp4q1Kx8Zr0m3Nn7Bv5Lc9Hs1D",
		ExpiresAt:         time.Now().Add(24 * time.Hour),
	})
	var invalid *appsession.InvalidError
	if errors.As(err, &invalid) {
		log.Fatalf("the edge sent a bad %s: %v", invalid.Field, err)
	}
	if err != nil {
		log.Fatal(err)
	}

	_, err = sessions.Refresh(ctx, appsession.RefreshRequest{AccountID: s.AccountID, ID: s.ID})
	if errors.Is(err, appsession.ErrEnded) {
		log.Print("log the user out")
		return
	}
	if err := sessions.End(ctx, appsession.EndRequest{AccountID: s.AccountID, ID: s.ID}); err != nil {
		log.Print(err)
	}
}
