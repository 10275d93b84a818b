package api

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/apiconv"
)

// listParameters are the query parameters of a resource family's list:
// paging (readPage) and filtering (readFilter).
var listParameters = []string{"limit", "before_id", filterParameter}

// queryRule is what a management route takes in its query. A route
// without one takes no query parameter.
type queryRule struct {
	takes []string // the parameters the route reads, in the order its messages list them
	// unfiltered, for a list that takes no filter, says what it lists
	// and why it takes none: its ?filter= is refused with ERR_SLUICE_335
	// saying so, rather than as an unknown parameter.
	unfiltered, why string
}

// takeQuery records the query parameters the management route pattern
// takes; checkQuery refuses any other.
func (s *Server) takeQuery(pattern string, rule queryRule) {
	if s.queries == nil {
		s.queries = make(map[string]queryRule)
	}
	s.queries[pattern] = rule
}

// checkQuery refuses a request with a query parameter its route does not
// read, as a body's unknown field is refused: 400 ERR_SLUICE_331 naming it
// (details.parameter) and saying which the route takes. Otherwise a
// misspelt ?limt= or a ?page= of another API would be answered as if it
// had not been sent, and echoed into the list's uri as if it had been
// taken.
func (s *Server) checkQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			next.ServeHTTP(w, r)
			return
		}
		if e := s.queries[r.Pattern].check(r); e != nil {
			apiconv.DropUnread(w, r)
			apiconv.WriteError(w, r, e)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxParameterShown is how much of an unknown parameter's name an answer
// shows, in bytes.
const maxParameterShown = 64

// check returns the API error of the first query parameter of r, by name,
// that the rule does not take; nil if it takes them all.
func (q queryRule) check(r *http.Request) *apiconv.Error {
	values := r.URL.Query()
	if _, ok := values[filterParameter]; ok && q.unfiltered != "" {
		e := apiconv.NewError(apiconv.CodeBadFilter, "the list of %s takes no ?filter=: %s; leave the filter out", q.unfiltered, q.why)
		e.Details = map[string]string{"parameter": filterParameter}
		return e
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if slices.Contains(q.takes, name) {
			continue
		}
		takes := r.Pattern + " takes no query parameters"
		if len(q.takes) > 0 {
			takes = r.Pattern + " takes only " + strings.Join(q.takes, ", ")
		}
		hint := ""
		if i := slices.IndexFunc(q.takes, func(t string) bool { return strings.EqualFold(t, name) }); i >= 0 {
			hint = " (did you mean " + q.takes[i] + "? parameter names are case-sensitive)"
		}
		// The name is the client's, up to the header's 1 MiB: the
		// answer shows its start.
		shown := strings.ToValidUTF8(name[:min(len(name), maxParameterShown)], "")
		quoted := strconv.Quote(shown)
		if len(shown) < len(name) {
			quoted += "..."
		}
		e := apiconv.NewError(apiconv.CodeUnknownField, "unknown query parameter %s%s: %s; remove it", quoted, hint, takes)
		e.Details = map[string]string{"parameter": shown}
		return e
	}
	return nil
}
