package sessionservice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
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

// blocking is a store whose records of one account wait until their ctx
// ends, and whose other records answer at once.
type blocking struct {
	Sessions
	slow          string
	entered, left chan struct{}
}

func (b blocking) RecordAppSession(ctx context.Context, accountID string, _ store.AppSession) (store.AppSession, error) {
	if accountID == b.slow {
		b.entered <- struct{}{}
		<-ctx.Done()
		defer close(b.left)
		return store.AppSession{}, ctx.Err()
	}
	return store.AppSession{ID: schemas.NewID(schemas.PrefixAppSession), AccountID: accountID}, nil
}

func (blocking) RemoveExpiredAppSessions(context.Context) (int, error) { return 0, nil }

// TestSlowAccountHoldsNoOther checks that a request of one account that
// takes long (a record evicting a session) does not hold the requests of
// another account, which a subscription answering one message at a time
// would; that an account past its share of requests under way is
// answered 429 at once; and that Run returns only once the requests
// under way have ended.
func TestSlowAccountHoldsNoOther(t *testing.T) {
	srv := natstest.Start(t)
	nc, _ := natstest.Connect(t, srv)
	slow, other := schemas.NewID(schemas.PrefixAccount), schemas.NewID(schemas.PrefixAccount)
	fake := blocking{slow: slow, entered: make(chan struct{}, 1), left: make(chan struct{})}
	svc := New(nc, fake, Config{MaxConcurrent: 4, MaxAccountConcurrent: 1, RequestTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	client := appsession.New(nc)
	record := func(account string) error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		_, err := client.Record(ctx, appsession.RecordRequest{AccountID: account})
		return err
	}
	check.Eventually(t, 5*time.Second, "an answer of the service", func() (error, bool) {
		err := record(other)
		return err, err == nil
	})
	go func() { _ = record(slow) }()
	<-fake.entered
	if err := record(other); err != nil {
		t.Fatalf("a record of another account while one is slow: %v, want an answer", err)
	}
	var busy *appsession.ServiceError
	if err := record(slow); !errors.As(err, &busy) || busy.Code != 429 {
		t.Fatalf("a second record of the slow account: %v, want a 429", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case <-fake.left:
	default:
		t.Fatal("Run returned before the slow request under way ended")
	}
}

// held is a store whose records of one account wait for release, then
// answer with the session, or with the error of their ctx if it has
// ended; those of other accounts answer at once.
type held struct {
	Sessions
	slow    string
	entered chan struct{}
	release chan struct{}
}

func (h held) RecordAppSession(ctx context.Context, accountID string, _ store.AppSession) (store.AppSession, error) {
	if accountID == h.slow {
		h.entered <- struct{}{}
		<-h.release
	}
	if err := ctx.Err(); err != nil {
		return store.AppSession{}, err
	}
	return store.AppSession{ID: schemas.NewID(schemas.PrefixAppSession), AccountID: accountID}, nil
}

func (held) RemoveExpiredAppSessions(context.Context) (int, error) { return 0, nil }

// TestStopAnswersRequestsUnderWay checks that a request under way when
// Run's ctx ends is answered, its store call not cancelled, and that Run
// returns once it is; and that the default RequestTimeout is shorter than
// the time a client waits by default.
func TestStopAnswersRequestsUnderWay(t *testing.T) {
	if DefaultRequestTimeout >= appsession.DefaultTimeout {
		t.Fatalf("DefaultRequestTimeout %v, not shorter than the client's %v", DefaultRequestTimeout, appsession.DefaultTimeout)
	}
	srv := natstest.Start(t)
	nc, _ := natstest.Connect(t, srv)
	slow := schemas.NewID(schemas.PrefixAccount)
	fake := held{slow: slow, entered: make(chan struct{}, 1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(fake.release) }) }
	t.Cleanup(release)
	svc := New(nc, fake, Config{Logger: slog.New(slog.DiscardHandler)})
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	client := appsession.New(nc)
	check.Eventually(t, 5*time.Second, "an answer of the service", func() (error, bool) {
		_, err := client.Record(t.Context(), appsession.RecordRequest{AccountID: schemas.NewID(schemas.PrefixAccount)})
		return err, err == nil
	})
	answered := make(chan error, 1)
	go func() {
		_, err := client.Record(t.Context(), appsession.RecordRequest{AccountID: slow})
		answered <- err
	}()
	<-fake.entered
	stop()
	release()
	if err := <-answered; err != nil {
		t.Fatalf("a record under way when the service stopped: %v, want its answer", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
