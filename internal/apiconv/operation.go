package apiconv

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// SupportedVersion is the only value of the Service-Version header sluice accepts.
const SupportedVersion = "2"

// Header names of the API.
const (
	HeaderVersion     = "Service-Version"
	HeaderOperationID = "Service-Operation-Id"
)

type ctxKey int

const (
	ctxOperation ctxKey = iota
	ctxAPIKey
	ctxBearer
)

// OperationID returns the operation id (op_...) of the request, which
// its answer carries in Service-Operation-Id and in error bodies.
func OperationID(ctx context.Context) string {
	id, _ := ctx.Value(ctxOperation).(string)
	return id
}

// RequestKey returns the API key that authenticated the request, once
// the front door's key check (FrontDoor.CheckKey) passed it.
func RequestKey(ctx context.Context) store.APIKey {
	k, _ := ctx.Value(ctxAPIKey).(store.APIKey)
	return k
}

// WithOperation gives every request an operation id, sent back in a
// header and in error bodies, and turns a panic of next into a 500,
// logged to log.
func WithOperation(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := schemas.NewID(schemas.PrefixOperation)
		w.Header().Set(HeaderOperationID, id)
		r = r.WithContext(context.WithValue(r.Context(), ctxOperation, id))
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.Error("handler panicked", "operation_id", id, "method", r.Method, "path", r.URL.Path, "panic", p)
				WriteError(w, r, NewError(CodeInternal, "sluice failed unexpectedly; report operation id %s", id))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func checkVersion(r *http.Request) *Error {
	v := r.Header.Values(HeaderVersion)
	switch {
	case len(v) == 0:
		return NewError(CodeVersionMissing, "the %s header is missing; send %s: %s (the only version supported)", HeaderVersion, HeaderVersion, SupportedVersion)
	case len(v) > 1 || strings.TrimSpace(v[0]) != SupportedVersion:
		return NewError(CodeVersionUnsupported, "%s %q is not supported; send %s: %s (the only version supported)", HeaderVersion, strings.Join(v, ", "), HeaderVersion, SupportedVersion)
	}
	return nil
}
