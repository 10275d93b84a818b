package edge

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/internal/store"
)

// httpChallengePath starts the path of an ACME HTTP-01 challenge (RFC
// 8555 8.3).
const httpChallengePath = "/.well-known/acme-challenge/"

// ChallengeAnswers are the pending ACME HTTP-01 challenges:
// store.Certificates.
type ChallengeAnswers interface {
	// HTTPChallengeAnswer returns the key authorization of the domain's
	// challenge with the token, or an error if none is pending.
	HTTPChallengeAnswer(ctx context.Context, domain, token string) (string, error)
}

// ServeHTTPChallenges returns next, the handler of the edge's HTTP
// listener, answering first the ACME HTTP-01 challenges that sluice's
// certificate jobs have pending for the host of a request: its key
// authorization, in text. A request of that path with no challenge
// pending goes to next, for an endpoint that answers its own.
func ServeHTTPChallenges(answers ChallengeAnswers, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.URL.Path, httpChallengePath)
		if !ok || r.Method != http.MethodGet || token == "" || strings.Contains(token, "/") {
			next.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		answer, err := answers.HTTPChallengeAnswer(r.Context(), host, token)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(answer))
	})
}

// HTTPChallenges is the table of the pending HTTP-01 challenges an edge
// answers, kept by a watch of the store (store.Certificates.FollowHTTPChallenges,
// Apply): a public request of the challenge path, which anyone can send
// with any host, costs a map read, not a store read. It is a
// ChallengeAnswers, safe for concurrent use.
type HTTPChallenges struct {
	mu sync.RWMutex
	// byKey are the challenges by the store's key; byName their key
	// authorizations by domain (lower case) and token.
	byKey  map[string]challengeName
	byName map[challengeName]string
}

type challengeName struct{ domain, token string }

// NewHTTPChallenges returns an empty table.
func NewHTTPChallenges() *HTTPChallenges {
	return &HTTPChallenges{byKey: make(map[string]challengeName), byName: make(map[challengeName]string)}
}

// Apply takes one change of the store's challenges: the challenge with
// the key, or nil when it is gone.
func (h *HTTPChallenges) Apply(key string, c *store.HTTPChallenge) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.byKey[key]; ok {
		delete(h.byName, old)
		delete(h.byKey, key)
	}
	if c == nil {
		return
	}
	name := challengeName{strings.ToLower(c.Domain), c.Token}
	h.byKey[key] = name
	h.byName[name] = c.KeyAuthorization
}

// HTTPChallengeAnswer returns the key authorization of the domain's
// challenge with the token, or store.ErrNotFound.
func (h *HTTPChallenges) HTTPChallengeAnswer(_ context.Context, domain, token string) (string, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if answer, ok := h.byName[challengeName{strings.ToLower(domain), token}]; ok {
		return answer, nil
	}
	return "", store.ErrNotFound
}
