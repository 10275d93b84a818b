package sessionservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicehq/sluice/appsession"
	"github.com/sluicehq/sluice/internal/check"
	"github.com/sluicehq/sluice/internal/natstest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// failing is a store whose every call fails with err.
type failing struct {
	Sessions
	err   error
	swept chan struct{}
}

func (f failing) RefreshAppSession(context.Context, string, string, time.Time, time.Time) (store.AppSession, error) {
	return store.AppSession{}, f.err
}

func (f failing) RemoveExpiredAppSessions(context.Context) (int, error) {
	select {
	case f.swept <- struct{}{}:
	default:
	}
	return 0, f.err
}

// TestStoreErrors checks the answer to each kind of store error: 409 for
// a session that kept changing, 503 for a store that cannot be reached,
// and that the service sweeps at start and answers until its ctx ends.
func TestStoreErrors(t *testing.T) {
	for _, tt := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("updating: %w", store.ErrConflict), 409},
		{errors.New("nats: timeout"), 503},
	} {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			srv := natstest.Start(t)
			nc, _ := natstest.Connect(t, srv)
			fake := failing{err: tt.err, swept: make(chan struct{}, 1)}
			svc := New(nc, fake, Config{Logger: slog.New(slog.DiscardHandler)})
			ctx, stop := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- svc.Run(ctx) }()
			<-fake.swept
			client := appsession.New(nc)
			req := appsession.RefreshRequest{AccountID: schemas.NewID(schemas.PrefixAccount), ID: schemas.NewID(schemas.PrefixAppSession)}
			err := check.Eventually(t, 5*time.Second, "an answer of the service", func() (error, bool) {
				_, err := client.Refresh(t.Context(), req)
				var service *appsession.ServiceError
				return err, errors.As(err, &service)
			})
			var service *appsession.ServiceError
			if !errors.As(err, &service) || service.Code != tt.code {
				t.Fatalf("Refresh: %v, want a %d", err, tt.code)
			}
			stop()
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
		})
	}
}
