package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
)

// module is a module of a family's resources: one optional value of the
// resource with a path of its own (specification section 4.3), served by
// routeModule for any family:
//
//	PUT    {path}/{id}/{name} 200, the module, replacing the one set
//	GET    {path}/{id}/{name} 200, the module; 404 if none is set
//	DELETE {path}/{id}/{name} 204, set or not
//
// A module is written by the family's update, so a change of it and any
// other change of the resource at once (another module's) both hold.
// M is the module as stored, In the body of a PUT, and MB the module as
// the API shows it.
type module[T, M, In, MB any] struct {
	name string // the last segment of its path, "circuit_breaker"
	noun string // its name in messages, "circuit breaker"
	// value returns the module a body of a PUT sets, its fields not sent
	// at their defaults.
	value func(in In) M
	// field returns a pointer to the module of v, nil when unset.
	field func(v *T) **M
	// body is the module as responses to r show it.
	body func(r *http.Request, m M) MB
}

// routeModule serves the module m of the family f's resources on s.
func routeModule[T, C, U, B, M, In, MB any](s *Server, f family[T, C, U, B], m module[T, M, In, MB]) {
	f.s = s
	path := f.res.listPath + "/{id}/" + m.name
	s.mux.Handle("PUT "+path, s.authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in In
		if e := decodeBody(w, r, &in); e != nil {
			apiconv.WriteError(w, r, e)
			return
		}
		value := m.value(in)
		v, err := f.changeModule(r, func(v *T) { *m.field(v) = &value })
		if err != nil {
			// The module's fields are the body's: a field of the
			// resource's check, such as circuit_breaker.num_buckets, is
			// num_buckets here.
			var invalid *store.ValidationError
			if errors.As(err, &invalid) {
				invalid.Field = strings.TrimPrefix(invalid.Field, m.name+".")
			}
			s.writeStoreError(w, r, err, f.res, r.PathValue("id"))
			return
		}
		apiconv.WriteJSON(w, http.StatusOK, m.body(r, **m.field(&v)))
	})))
	s.mux.Handle("GET "+path, s.authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		v, err := f.getIn(r, id)
		if err != nil {
			s.writeStoreError(w, r, err, f.res, id)
			return
		}
		set := *m.field(&v)
		if set == nil {
			apiconv.WriteError(w, r, apiconv.NewError(apiconv.CodeModuleNotSet, "the %s %s has no %s: set one with PUT %s", f.res.noun, id, m.noun, r.URL.Path))
			return
		}
		apiconv.WriteJSON(w, http.StatusOK, m.body(r, *set))
	})))
	s.mux.Handle("DELETE "+path, s.authenticated(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := f.changeModule(r, func(v *T) { *m.field(v) = nil }); err != nil {
			s.writeStoreError(w, r, err, f.res, r.PathValue("id"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})))
}

// changeModule updates the resource of the path with set, which sets or
// removes one of its modules, and returns it as written.
func (f family[T, C, U, B]) changeModule(r *http.Request, set func(v *T)) (T, error) {
	id := r.PathValue("id")
	if err := f.inParent(r, id); err != nil {
		var zero T
		return zero, err
	}
	opts, publish := f.change(r, changeUpdated)
	v, err := f.update(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id, func(v *T) error {
		set(v)
		return nil
	}, opts...)
	if err == nil {
		publish()
	}
	return v, err
}
