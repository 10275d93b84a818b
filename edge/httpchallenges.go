package edge

import (
	"context"
	"net"
	"net/http"
	"strings"
)

// httpChallengePath starts the path of an ACME HTTP-01 challenge (RFC
// 8555 8.3).
const httpChallengePath = "/.well-known/acme-challenge/"

// ChallengeAnswers are the pending ACME HTTP-01 challenges:
// *store.Store.
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
