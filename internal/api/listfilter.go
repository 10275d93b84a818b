package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/apiconv"
)

// The ?filter= of a family's list (docs/api.md#filtering-lists): a CEL
// expression over each resource as the list shows it, its body B, bound
// to obj, such as obj.description.startsWith("prod"). It is compiled
// against B's JSON fields (package filters, ObjectEnv), so a field B does
// not have is a 400 before anything is read, and it applies before the
// page is cut: a page holds up to limit resources that match, and its
// next_page_uri carries the filter.

// filterParameter is the query parameter of a list's filter.
const filterParameter = "filter"

// newListFilter returns the environment of the filters of a family whose
// body is B. A body CEL cannot declare is a mistake in the code, found by
// any test that builds a server: it panics.
func newListFilter[B any]() *filters.ObjectEnv {
	env, err := filters.NewObjectEnv(reflect.TypeFor[B]())
	if err != nil {
		panic(fmt.Sprintf("api: the list of %v cannot take a filter: %v", reflect.TypeFor[B](), err))
	}
	return env
}

// readFilter returns the store.Page's Match of the list request's ?filter=,
// which evaluates the filter on body(item), or nil if the request has
// none, or the API error saying why the filter cannot be used.
func readFilter[T, B any](r *http.Request, env *filters.ObjectEnv, path string, body func(*http.Request, T) B) (func(any) (bool, error), *apiconv.Error) {
	raw, ok := r.URL.Query()[filterParameter]
	if !ok {
		return nil, nil
	}
	if len(raw) > 1 {
		e := apiconv.NewError(apiconv.CodeBadFilter, "?filter= is given %d times: give one filter, joining conditions with && or ||, such as %s", len(raw), env.Example())
		e.Details = map[string]string{"parameter": filterParameter}
		return nil, e
	}
	prg, err := env.Program(raw[0])
	if err != nil {
		return nil, badFilter(env, path, err)
	}
	match := prg.Matcher(r.Context())
	return func(item any) (bool, error) {
		v, isT := item.(T)
		if !isT { // a bug of the store's list: a 500
			return false, fmt.Errorf("filtering: the store's list gave a %T, not a %T", item, v)
		}
		ok, err := match(body(r, v))
		if err != nil {
			return false, &filterError{id: resourceID(v), err: err}
		}
		return ok, nil
	}, nil
}

// badFilter is the API error of a filter that does not compile: what is
// wrong, where (details.issues, each with its 1-based line and column, 0
// when about the whole filter), the fields obj has and a filter that
// works.
func badFilter(env *filters.ObjectEnv, path string, err error) *apiconv.Error {
	var ce *filters.CompileError
	if !errors.As(err, &ce) {
		// Only a failure to estimate a checked filter's cost, a bug.
		return apiconv.NewError(apiconv.CodeInternal, "checking the filter: %v", err)
	}
	issues := make([]map[string]any, len(ce.Issues))
	for i, iss := range ce.Issues {
		issues[i] = map[string]any{"line": iss.Line, "column": iss.Column, "message": iss.Msg}
	}
	e := apiconv.NewError(apiconv.CodeBadFilter, "?filter= is not a filter of %s: %s. The filter is a CEL expression over each resource as the list shows it, named obj, whose fields are %s; such as %s",
		path, strings.TrimPrefix(ce.Error(), "invalid filter: "), strings.Join(env.Fields(), ", "), env.Example())
	e.Details = map[string]string{"parameter": filterParameter, "issues": apiconv.DetailJSON(issues)}
	return e
}

// filterError is a filter that failed on the resource id; the list
// answers it as the API error of filterFailed.
type filterError struct {
	id  string
	err error
}

func (e *filterError) Error() string { return "filtering " + e.id + ": " + e.err.Error() }

// filterFailed returns the API error of a list whose filter failed on a
// resource, if err is one.
func filterFailed(ctx context.Context, err error) (*apiconv.Error, bool) {
	var fe *filterError
	if !errors.As(err, &fe) || ctx.Err() != nil {
		return nil, false
	}
	why := strings.TrimPrefix(fe.err.Error(), "evaluating filter: ")
	switch {
	case errors.Is(fe.err, filters.ErrCostLimit):
		why = fmt.Sprintf("it went over its cost limit of %d on one resource", filters.MaxObjectCost)
	case errors.Is(fe.err, filters.ErrListCostLimit):
		e := apiconv.NewError(apiconv.CodeFilterFailed, "?filter= went over its cost limit of %d for one list, the sum of its costs on each resource it was evaluated on, at %s: "+
			"write a filter that costs less on each resource (fewer loops, shorter strings searched)", filters.MaxObjectListCost, fe.id)
		e.Details = map[string]string{"parameter": filterParameter, "id": fe.id}
		return e, true
	}
	e := apiconv.NewError(apiconv.CodeFilterFailed, "?filter= failed on %s: %s. Guard what can fail, such as size(obj.acl) > 2 && obj.acl[2] == \"*\", or \"key\" in m && m.key == \"v\"", fe.id, why)
	e.Details = map[string]string{"parameter": filterParameter, "id": fe.id}
	return e, true
}

// listError answers a list's error: a filter that failed, or an error of
// the store about the family res.
func (s *Server) listError(w http.ResponseWriter, r *http.Request, err error, res resource) {
	if e, ok := filterFailed(r.Context(), err); ok {
		apiconv.WriteError(w, r, e)
		return
	}
	s.writeStoreError(w, r, err, res, "")
}

// withFilter adds the request's ?filter= to the query of a next page.
func withFilter(r *http.Request, q map[string][]string) {
	if raw, ok := r.URL.Query()[filterParameter]; ok {
		q[filterParameter] = raw[:1]
	}
}

// resourceID returns the ID field of a stored resource, "" if it has none.
func resourceID(v any) string {
	if f := reflect.Indirect(reflect.ValueOf(v)).FieldByName("ID"); f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}
