package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// readPage returns the page a list request asks for with ?limit= and
// ?before_id= (an id of the prefix), or the API error naming the bad
// parameter.
func readPage(r *http.Request, prefix string) (store.Page, *apiconv.Error) {
	q := r.URL.Query()
	page := store.Page{Limit: store.DefaultPageLimit, BeforeID: q.Get("before_id")}
	if raw, ok := q["limit"]; ok {
		n, err := strconv.Atoi(raw[0])
		if err != nil || n < 1 || n > store.MaxPageLimit || len(raw) > 1 {
			return store.Page{}, badParameter("limit", "?limit=%s is not a whole number from 1 to %d; send one, or leave limit out for %d", strings.Join(raw, ","), store.MaxPageLimit, store.DefaultPageLimit)
		}
		page.Limit = n
	}
	if _, ok := q["before_id"]; ok && schemas.CheckID(prefix, page.BeforeID) != nil {
		return store.Page{}, badParameter("before_id", "?before_id=%s is not an id %q followed by 27 base62 characters; use the next_page_uri the list returned", page.BeforeID, prefix)
	}
	return page, nil
}

func badParameter(name, format string, args ...any) *apiconv.Error {
	e := apiconv.NewError(apiconv.CodeBadParameter, format, args...)
	e.Details = map[string]string{"parameter": name}
	return e
}

// resourceURI is the full URL of a path of the API: Config.BaseURL and the
// path. The request is not read: its Host is the client's to choose, and
// the URL may be stored in an audit event.
func (s *Server) resourceURI(_ *http.Request, path string) string {
	return strings.TrimRight(s.cfg.BaseURL, "/") + path
}

// listURIs returns the full URL of the list requested and that of its next
// page, nil after the last page (next is ""), which carries the request's
// filter.
func (s *Server) listURIs(r *http.Request, page store.Page, next string) (string, *string) {
	uri := s.resourceURI(r, r.URL.Path)
	if r.URL.RawQuery != "" {
		uri += "?" + r.URL.RawQuery
	}
	if next == "" {
		return uri, nil
	}
	q := url.Values{"limit": {strconv.Itoa(page.Limit)}, "before_id": {next}}
	withFilter(r, q)
	nextURI := s.resourceURI(r, r.URL.Path) + "?" + q.Encode()
	return uri, &nextURI
}
