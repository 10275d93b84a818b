package apiconv

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Storage says whether JetStream's store takes writes.
// *natsserver.StorageWatch implements it for the embedded server.
type Storage interface {
	// Err returns nil while the store takes writes, and otherwise why not,
	// such as "JetStream's storage is full".
	Err() error
	// Failed returns a channel that is closed once the store refuses
	// writes: at once if it does now.
	Failed() <-chan struct{}
}

// errStorage is the cause of the context of a request that was writing
// when the store started to refuse writes.
var errStorage = errors.New("JetStream's storage stopped taking writes")

// jsInsufficientResources is the JetStream API error code of a write
// refused because the server's or the account's storage limit is reached.
const jsInsufficientResources = 10023

// storageRetryAfter is the Retry-After, in seconds, of a request refused
// because the store refuses writes: space returns when someone frees it,
// not in a second.
const storageRetryAfter = "10"

// GuardStorage refuses, at once, a request that writes (any method but
// GET and HEAD) while storage refuses writes, and cancels the context
// of one in flight when the store starts to: a write JetStream will never
// answer then does not wait for its timeout. Refusing every write also
// keeps management changes whole: none is half made. With storage nil
// (not watched), it returns next.
func GuardStorage(storage Storage, next http.Handler) http.Handler {
	if storage == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		if storage.Err() != nil {
			WriteStorageError(w, r)
			return
		}
		ctx, cancel := context.WithCancelCause(r.Context())
		defer cancel(nil)
		failed := storage.Failed()
		go func() { // ends with the request, at the latest

			select {
			case <-failed:
				cancel(errStorage)
			case <-ctx.Done():
			}
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// StorageError returns the error that the store refuses writes, if err (of
// a write made with ctx, under GuardStorage) comes from that, or nil:
// the storage watch said so (storage, nil when not watched), or JetStream
// answered that its storage is exhausted (an external NATS server at its
// storage limit).
func StorageError(ctx context.Context, storage Storage, err error) error {
	if err == nil {
		return nil
	}
	if storage != nil {
		if werr := storage.Err(); werr != nil {
			return werr
		}
	}
	if errors.Is(context.Cause(ctx), errStorage) {
		return errStorage
	}
	var jsErr jetstream.JetStreamError
	if errors.As(err, &jsErr) && jsErr.APIError() != nil && jsErr.APIError().ErrorCode == jsInsufficientResources {
		return err
	}
	if strings.Contains(err.Error(), "no space left on device") {
		return err
	}
	return nil
}

// WriteStorageError answers that the store refuses writes, and that
// nothing was stored.
func WriteStorageError(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, StorageFull(w, "nothing was stored"))
}

// StorageFull returns the error (503 CodeStorageFull) saying that the
// store refuses writes and what that meant for the request (stored: what
// was stored), and sets Retry-After. The cause stays in the log: it names
// files of the server.
func StorageFull(w http.ResponseWriter, stored string) *Error {
	w.Header().Set("Retry-After", storageRetryAfter)
	return NewError(CodeStorageFull, "sluice cannot store anything right now: its storage is full or refuses writes, so %s. sluice takes writes again by itself once space is freed; send the same request again after Retry-After seconds", stored)
}
