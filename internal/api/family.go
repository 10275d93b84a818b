package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/filters"
	"github.com/sluicehq/sluice/internal/apiconv"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/strictjson"
)

// family declares a resource family of the management API once: its path,
// its store operations, how the body of a create or an update sets its
// fields, and how it is shown. One implementation (route and the handlers
// below) serves every family:
//
//	POST   {path}      201, the resource
//	GET    {path}      200, a page, newest first (?limit=, ?before_id=, ?filter=)
//	GET    {path}/{id} 200, the resource
//	PATCH  {path}/{id} 200, the resource
//	DELETE {path}/{id} 204
//
// with the errors of writeStoreError (404 for an id of another account,
// 409 on conflicts and limits) and, for a family with audit kinds, the
// audit event of each change stored with the change. What is a family's
// own is a hook: the body functions, auditObject and created. A family
// without create (or update) has no POST (or PATCH) route, such as a
// family whose resources another service makes: its C (or U) is noBody;
// one without delete has no DELETE route.
//
// T is the stored resource, C and U the bodies of a create and of an
// update, and B the resource as the API shows it. C and U may be one
// type, such as an input type of package apiwire that serves both: the
// family's declared fields say which of its fields each body takes.
type family[T, C, U, B any] struct {
	// spec is the family's declaration (package resource): the prefix of
	// its ids, checked in ?before_id=, its path, the member of a page
	// that holds its resources, and its fields: a body takes the fields
	// of C (or U) that they say a create (or an update) takes, and any
	// other member is an unknown field.
	spec  declared.Spec
	res   resource // its noun in messages, and its path, spec's
	audit string   // the family of its audit kinds, such as "api_key"; "": it has no audit events

	// The store's operations; see the store's methods for their errors.
	// create, update and delete may be nil: not served.
	create func(ctx context.Context, accountID string, v T, opts ...store.WriteOption) (T, error)
	get    func(ctx context.Context, accountID, id string) (T, error)
	list   func(ctx context.Context, accountID string, page store.Page) ([]T, string, error)
	update func(ctx context.Context, accountID, id string, fn func(*T) error, opts ...store.WriteOption) (T, error)
	delete func(ctx context.Context, accountID, id string, opts ...store.WriteOption) (T, error)

	// applyCreate and applyUpdate set the fields a body of a create and
	// of an update sent on the resource, and leave the others; nil when
	// not served. The store may call them more than once, on a fresh
	// resource each time, so they must not share the body's slices with
	// the resource.
	applyCreate func(in C, v *T)
	applyUpdate func(in U, v *T)

	// body is the resource as responses show it.
	body func(r *http.Request, v T) B
	// auditObject is the object of an audit event of the resource; nil:
	// its body.
	auditObject func(r *http.Request, v T) any
	// stored, for a family whose T wraps what the store keeps (with
	// what its body shows besides), returns the resource the store hands
	// an audit event as a T, false if it is none; nil: it is a T.
	stored func(resource any) (T, bool)
	// created, if set, changes the answer to a create, such as for a value
	// shown this once.
	created func(w http.ResponseWriter, v T, body *B)
	// fixed are the fields a create sets and no update may change, each
	// with what to do instead: an update sending one is a 400
	// ERR_SLUICE_340 naming it, rather than an unknown field. For the
	// parent's id, which a body may repeat (echoes), it is what to do
	// when the body's is not the path's.
	fixed map[string]string
	// madeBy, for a family whose resources another part of sluice makes
	// and ends, such as tunnel sessions, says so: a POST, PATCH or DELETE
	// of its paths answers 405 with it. "": the generic 405.
	madeBy string
	// parent, for a family whose resources belong to a resource of
	// another family, such as the routes of an HTTPS edge, is that
	// family; nil for none.
	parent *parent[T]

	s       *Server
	objects *filters.ObjectEnv // the filters of its list, over B (listfilter.go)
	// createTakes and updateTakes are the members of C and U a body of a
	// create and of an update takes (fields), set by route.
	createTakes, updateTakes []string
}

// parent is the family a nested family's resources belong to: its path
// holds the parent's id ({param}), a create gives the resource that
// parent, a list lists the parent's alone, and a get, update or delete of
// a resource of another parent answers 404 as one of another account does.
type parent[T any] struct {
	param string   // the path wildcard of the parent's id, "edge_id"
	res   resource // the parent's family, for its 404
	// of returns a pointer to the parent id of v, which create sets and
	// nothing changes after.
	of func(v *T) *string
	// exists returns an error wrapping store.ErrNotFound if the account
	// has no such parent.
	exists func(ctx context.Context, accountID, id string) error
	// list returns a page of the resources of the parent, as the family's
	// list does of the account's.
	list func(ctx context.Context, accountID, parentID string, page store.Page) ([]T, string, error)
}

// noBody is the C or U of a family without create or update.
type noBody struct{}

// takes returns the JSON names of the fields of the body type t, in its
// order, that the declaration says a create (or an update) takes.
func takes(t reflect.Type, spec declared.Spec, update bool) []string {
	names := []string{} // none, not nil: nil would take every field (strictjson.Options.Takes)
	for sf := range t.Fields() {
		name, ok := strictjson.FieldName(sf)
		if !ok {
			continue
		}
		if f, ok := spec.Lookup(name); !ok || update && !f.Update || !update && !f.Create {
			continue
		}
		names = append(names, name)
	}
	return names
}

// setSent sets *field to the value sent, if one was (sent is not nil).
func setSent[V any](field *V, sent *V) {
	if sent != nil {
		*field = *sent
	}
}

// familyDoc is what docs/openapi.yaml must say of a family routed: the
// test of the document reads it.
type familyDoc struct {
	path, listKey, prefix string
	body, create, update  reflect.Type // create, update: nil when not served
	delete                bool         // whether DELETE {path}/{id} is served
	// createFields and updateFields are the members of create and update
	// that a body of each takes.
	createFields, updateFields []string
	// createEchoes and updateEchoes are the members a create's and an
	// update's body may hold besides the fields of create and update,
	// before them: those repeating the path.
	createEchoes, updateEchoes []string
}

// route serves the family's routes on s.
func route[T, C, U, B any](s *Server, f family[T, C, U, B]) {
	if f.spec.Path != f.res.listPath {
		panic(fmt.Sprintf("api: the family of %s is declared at %s", f.res.listPath, f.spec.Path))
	}
	f.s = s
	f.objects = newListFilter[B]()
	f.createTakes = takes(reflect.TypeFor[C](), f.spec, false)
	f.updateTakes = takes(reflect.TypeFor[U](), f.spec, true)
	doc := familyDoc{path: f.res.listPath, listKey: f.spec.ListKey, prefix: f.spec.Prefix, body: reflect.TypeFor[B]()}
	if f.create != nil {
		s.mux.Handle("POST "+f.res.listPath, s.authenticated(http.HandlerFunc(f.createOne)))
		doc.create, doc.createFields = reflect.TypeFor[C](), f.createTakes
		doc.createEchoes = echoMembers(f.echoes(false))
	}
	s.mux.Handle("GET "+f.res.listPath, s.authenticated(http.HandlerFunc(f.listPage)))
	s.takeQuery("GET "+f.res.listPath, queryRule{takes: listParameters})
	s.mux.Handle("GET "+f.res.listPath+"/{id}", s.authenticated(http.HandlerFunc(f.getOne)))
	if f.update != nil {
		s.mux.Handle("PATCH "+f.res.listPath+"/{id}", s.authenticated(http.HandlerFunc(f.updateOne)))
		doc.update, doc.updateFields = reflect.TypeFor[U](), f.updateTakes
		doc.updateEchoes = echoMembers(f.echoes(true))
	}
	if f.delete != nil {
		s.mux.Handle("DELETE "+f.res.listPath+"/{id}", s.authenticated(http.HandlerFunc(f.deleteOne)))
		doc.delete = true
	}
	if f.madeBy != "" {
		if s.madeBy == nil {
			s.madeBy = make(map[string]string)
		}
		s.madeBy[f.res.listPath] = f.madeBy
	}
	s.families = append(s.families, doc)
}

// echoMembers returns the members of echoes.
func echoMembers(echoes []pathEcho) []string {
	members := make([]string, len(echoes))
	for i, e := range echoes {
		members[i] = e.member
	}
	return members
}

// change returns the store's options that write the audit event of a
// change of the request with the change, and publish, which sends it once
// the change is made; for a family without audit events, neither does
// anything.
func (f family[T, C, U, B]) change(r *http.Request, change string) (opts []store.WriteOption, publish func()) {
	if f.audit == "" {
		return nil, func() {}
	}
	object := f.auditObject
	if object == nil {
		object = func(r *http.Request, v T) any { return f.body(r, v) }
	}
	a := newAudit(f.s, r, f.audit, change, func(v T) any { return object(r, v) })
	if f.stored != nil {
		a.from = f.stored
	}
	return []store.WriteOption{a.option()}, a.publish
}

// echoes returns the members a body of the family may hold to repeat its
// path: the parent's id, and for an update the resource's id, as the
// official API clients send them.
func (f family[T, C, U, B]) echoes(update bool) []pathEcho {
	var echoes []pathEcho
	if f.parent != nil {
		echoes = append(echoes, pathEcho{member: f.parent.param, param: f.parent.param, instead: f.fixed[f.parent.param]})
	}
	if update {
		echoes = append(echoes, pathEcho{member: "id", param: "id", instead: f.fixed["id"]})
	}
	return echoes
}

func (f family[T, C, U, B]) createOne(w http.ResponseWriter, r *http.Request) {
	var in C
	if e := decodeInput(w, r, &in, f.createTakes, f.echoes(false)...); e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	var v T
	f.applyCreate(in, &v)
	if f.parent != nil {
		*f.parent.of(&v) = r.PathValue(f.parent.param)
	}
	opts, publish := f.change(r, changeCreated)
	created, err := f.create(r.Context(), apiconv.RequestKey(r.Context()).AccountID, v, opts...)
	if err != nil {
		if f.parent != nil && errors.Is(err, store.ErrNotFound) {
			// What a create of a nested family does not find is its parent.
			err = parentError{err: err, res: f.parent.res, id: r.PathValue(f.parent.param)}
		}
		f.s.writeStoreError(w, r, err, f.res, "")
		return
	}
	publish()
	body := f.body(r, created)
	if f.created != nil {
		f.created(w, created, &body)
	}
	apiconv.WriteJSON(w, http.StatusCreated, body)
}

func (f family[T, C, U, B]) listPage(w http.ResponseWriter, r *http.Request) {
	page, e := readPage(r, f.spec.Prefix)
	if e == nil {
		page.Match, e = readFilter(r, f.objects, f.res.listPath, f.body)
	}
	if e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	items, next, err := f.listOf(r, page)
	if err != nil {
		f.s.listError(w, r, err, f.res)
		return
	}
	list := apiwire.Page[B]{Key: f.spec.ListKey, Items: make([]B, len(items))}
	for i, v := range items {
		list.Items[i] = f.body(r, v)
	}
	list.URI, list.NextPageURI = f.s.listURIs(r, page, next)
	apiconv.WriteJSON(w, http.StatusOK, list)
}

// listOf returns a page of the account's resources, or of the path's
// parent's: an error wrapping store.ErrNotFound, with the parent's
// resource, if the account has no such parent.
func (f family[T, C, U, B]) listOf(r *http.Request, page store.Page) ([]T, string, error) {
	accountID := apiconv.RequestKey(r.Context()).AccountID
	if f.parent == nil {
		return f.list(r.Context(), accountID, page)
	}
	parentID := r.PathValue(f.parent.param)
	if err := f.parent.exists(r.Context(), accountID, parentID); err != nil {
		return nil, "", parentError{err: err, res: f.parent.res, id: parentID}
	}
	return f.parent.list(r.Context(), accountID, parentID, page)
}

// parentError is a parent that was not found, which writeStoreError
// answers about the parent rather than the resource.
type parentError struct {
	err error
	res resource
	id  string
}

func (e parentError) Error() string { return e.err.Error() }
func (e parentError) Unwrap() error { return e.err }

// getIn returns the resource id of the account, and an error wrapping
// store.ErrNotFound if it belongs to a parent other than the path's.
func (f family[T, C, U, B]) getIn(r *http.Request, id string) (T, error) {
	v, err := f.get(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id)
	if err == nil && f.parent != nil && *f.parent.of(&v) != r.PathValue(f.parent.param) {
		var zero T
		return zero, fmt.Errorf("%s %s of another parent: %w", f.res.noun, id, store.ErrNotFound)
	}
	return v, err
}

// inParent returns an error wrapping store.ErrNotFound if the resource id
// belongs to a parent other than the path's, which a resource of another
// account does too; nil for a family without parent. A resource's parent
// never changes, so what it reads holds for the update or delete after.
func (f family[T, C, U, B]) inParent(r *http.Request, id string) error {
	if f.parent == nil {
		return nil
	}
	_, err := f.getIn(r, id)
	return err
}

func (f family[T, C, U, B]) getOne(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := f.getIn(r, id)
	if err != nil {
		f.s.writeStoreError(w, r, err, f.res, id)
		return
	}
	apiconv.WriteJSON(w, http.StatusOK, f.body(r, v))
}

func (f family[T, C, U, B]) updateOne(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in U
	if e := decodeInput(w, r, &in, f.updateTakes, f.echoes(true)...); e != nil {
		field := fmt.Sprint(e.Details["field"])
		if instead, ok := f.fixed[field]; ok && e.Code == apiconv.CodeUnknownField {
			e = apiconv.NewError(apiconv.CodeFieldFixed, "field %q cannot be changed after create: %s", field, instead)
			e.Details = map[string]string{"field": field}
		}
		apiconv.WriteError(w, r, e)
		return
	}
	if err := f.inParent(r, id); err != nil {
		f.s.writeStoreError(w, r, err, f.res, id)
		return
	}
	opts, publish := f.change(r, changeUpdated)
	v, err := f.update(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id, func(v *T) error {
		f.applyUpdate(in, v)
		return nil
	}, opts...)
	if err != nil {
		f.s.writeStoreError(w, r, err, f.res, id)
		return
	}
	publish()
	apiconv.WriteJSON(w, http.StatusOK, f.body(r, v))
}

func (f family[T, C, U, B]) deleteOne(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := f.inParent(r, id); err != nil {
		f.s.writeStoreError(w, r, err, f.res, id)
		return
	}
	opts, publish := f.change(r, changeDeleted)
	if _, err := f.delete(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id, opts...); err != nil {
		f.s.writeStoreError(w, r, err, f.res, id)
		return
	}
	publish()
	w.WriteHeader(http.StatusNoContent)
}

// jsonText builds a JSON text of literal punctuation and encoded values,
// for the MarshalJSON of a body whose member names are not fixed. Values
// are encoded as apiconv.WriteJSON encodes a body: without escaping HTML
// characters.
type jsonText struct {
	buf bytes.Buffer
	err error
}

// add appends literal and v encoded; after an error, nothing.
func (t *jsonText) add(literal string, v any) {
	if t.err != nil {
		return
	}
	t.buf.WriteString(literal)
	enc := json.NewEncoder(&t.buf)
	enc.SetEscapeHTML(false)
	if t.err = enc.Encode(v); t.err == nil {
		t.buf.Truncate(t.buf.Len() - 1) // Encode's newline
	}
}

// end appends literal and returns the text, or the first error of add.
func (t *jsonText) end(literal string) ([]byte, error) {
	if t.err != nil {
		return nil, t.err
	}
	t.buf.WriteString(literal)
	return t.buf.Bytes(), nil
}
