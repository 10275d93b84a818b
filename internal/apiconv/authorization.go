package apiconv

import (
	"context"
	"net/http"

	"github.com/sluicehq/sluice/internal/authheader"
	"github.com/sluicehq/sluice/internal/store"
)

// Keys checks API keys. *store.Store implements it.
type Keys interface {
	// Authenticate returns the key whose token this is, or an error wrapping
	// store.ErrUnauthenticated.
	Authenticate(ctx context.Context, token string) (store.APIKey, error)
}

// parseAuthorization returns the bearer token of the values of a request's
// Authorization header, as authheader.Parse reads it, of at most
// store.MaxTokenLength characters. present is false when the request has
// no Authorization; a header of any other form is a 400
// CodeAuthMalformed, which never quotes the header (it may hold a key).
func parseAuthorization(values []string) (token string, present bool, e *Error) {
	token, present, err := authheader.Parse(values, store.MaxTokenLength)
	if err != nil {
		return "", true, NewError(CodeAuthMalformed, "%s", err.Error())
	}
	return token, present, nil
}

// bearer is the bearer token of a request and, once looked up, the API key
// it names: the request's one authentication, which the traffic policy
// (KeyID) and the key's check (FrontDoor.CheckKey) share. It is used on the
// request's goroutine only, and is not safe for concurrent use.
type bearer struct {
	token  string
	keys   Keys
	looked bool
	key    store.APIKey
	err    error
}

// authenticate returns the API key of the token, looking it up once.
func (b *bearer) authenticate(ctx context.Context) (store.APIKey, error) {
	if !b.looked {
		b.key, b.err = b.keys.Authenticate(ctx, b.token)
		b.looked = true
	}
	return b.key, b.err
}

// bearerOf returns the bearer token of the request, nil if it has none.
func bearerOf(ctx context.Context) *bearer {
	b, _ := ctx.Value(ctxBearer).(*bearer)
	return b
}

// CanonicalAuthorization refuses, with 400 CodeAuthMalformed, a request
// whose Authorization header is of another form than parseAuthorization
// takes, before the traffic policy and the key's check run; it rewrites
// one it takes as "Bearer <token>", so that whatever reads the header
// (the policy's getReqHeader('Authorization')) sees the token the key's
// check looks up, and gives the request its bearer, whose key keys looks
// up once, for KeyID and FrontDoor.CheckKey.
func CanonicalAuthorization(keys Keys, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values("Authorization")
		token, present, e := parseAuthorization(values)
		if e != nil {
			DropUnread(w, r)
			WriteError(w, r, e)
			return
		}
		if present {
			if canonical := "Bearer " + token; values[0] != canonical {
				r.Header.Set("Authorization", canonical)
			}
			r = r.WithContext(context.WithValue(r.Context(), ctxBearer, &bearer{token: token, keys: keys}))
		}
		next.ServeHTTP(w, r)
	})
}

// KeyID returns the id (ak_...) of the API key that the request's
// Authorization names, and whether it names one: false without the
// header, for a key sluice does not know, or when the key store cannot be
// read. It looks the key up at most once per request, and the key's check
// of the API reuses that lookup. It serves the traffic policy of the API
// (trafficpolicy.WithAPIKey), which runs before the check: call it only
// on requests the API serves.
func KeyID(r *http.Request) (string, bool) {
	b := bearerOf(r.Context())
	if b == nil {
		return "", false
	}
	key, err := b.authenticate(r.Context())
	if err != nil {
		return "", false
	}
	return key.ID, true
}
