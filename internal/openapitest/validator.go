package openapitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Names of the components.responses that answer requests no operation
// takes.
const (
	responseNotFound         = "NotFound"
	responseMethodNotAllowed = "MethodNotAllowed"
)

// Validator checks HTTP exchanges against an OpenAPI 3.1 document. It is
// safe for concurrent use.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	// notFound and methodNotAllowed are the operations a request takes when
	// its path is not in the document, or its method is not on the path.
	notFound, methodNotAllowed *openapi3.Operation
}

// loaded holds the validators Load made, by the document's absolute path
// and content: loading and validating docs/openapi.yaml takes about 0.4 s
// under the race detector, and a package's tests load it once each. A
// Validator is never changed once made, so the tests share it.
var loaded struct {
	mu         sync.Mutex
	validators map[loadKey]*Validator
}

type loadKey struct {
	path string
	sum  [sha256.Size]byte
}

// Load reads the OpenAPI document at path, resolves its references and
// validates it. It fails t at once when the document cannot be read, is not
// OpenAPI 3.1, is invalid, or lacks the NotFound and MethodNotAllowed
// responses in components.responses. A document already loaded, at the same
// path with the same content, is not loaded again: Load returns the same
// Validator.
func Load(t testing.TB, path string) *Validator {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("loading the OpenAPI document %s: %v", path, err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		t.Fatalf("loading the OpenAPI document %s: %v", path, err)
	}
	key := loadKey{path: abs, sum: sha256.Sum256(data)}
	loaded.mu.Lock()
	v := loaded.validators[key]
	loaded.mu.Unlock()
	if v != nil {
		return v
	}
	v = load(t, path, abs, data)
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	if loaded.validators == nil {
		loaded.validators = make(map[loadKey]*Validator)
	}
	loaded.validators[key] = v
	return v
}

// load makes the Validator of the document data, read from abs, as Load
// says; path is the name the caller gave it.
func load(t testing.TB, path, abs string, data []byte) *Validator {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Path: filepath.ToSlash(abs)})
	if err != nil {
		t.Fatalf("loading the OpenAPI document %s: %v", path, err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("%s is OpenAPI %q; want 3.1", path, doc.OpenAPI)
	}
	// For 3.1, Validate checks schemas as JSON Schema 2020-12.
	if err := doc.Validate(context.Background(), openapi3.EnableMultiError()); err != nil {
		t.Fatalf("the OpenAPI document %s is invalid: %v", path, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("routing the operations of %s: %v", path, err)
	}
	v := &Validator{doc: doc, router: router}
	for _, f := range []struct {
		name   string
		status int
		op     **openapi3.Operation
	}{
		{responseNotFound, http.StatusNotFound, &v.notFound},
		{responseMethodNotAllowed, http.StatusMethodNotAllowed, &v.methodNotAllowed},
	} {
		ref := doc.Components.Responses[f.name]
		if ref == nil {
			t.Fatalf("%s has no components.responses.%s: it describes the %d answered to requests no operation takes", path, f.name, f.status)
		}
		*f.op = &openapi3.Operation{Responses: openapi3.NewResponses(openapi3.WithStatus(f.status, ref))}
	}
	return v
}

// Check reports to t, with Errorf, every way the exchange differs from the
// document: a request no operation takes that is not answered with the
// NotFound or MethodNotAllowed response; a status the operation does not
// list; a missing or malformed header of the response; a body of the wrong
// media type or schema, or a body where the document has none; and, for a
// success (2xx), a request the document refuses. reqBody and respBody are
// the bodies, which Check does not read from req and resp. Check never
// stops the test, so it may be called from any goroutine.
func (v *Validator) Check(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	exchange := fmt.Sprintf("%s %s answered %d", req.Method, req.URL.Path, resp.StatusCode)
	route, params, err := v.router.FindRoute(req)
	routed := err == nil
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		route = &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: req.Method, Operation: v.notFound}
		exchange += " (the path is in no operation of the document, so the answer must be its " + responseNotFound + " response)"
	case errors.Is(err, routers.ErrMethodNotAllowed):
		route = &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: req.Method, Operation: v.methodNotAllowed}
		exchange += " (the path takes no such method in the document, so the answer must be its " + responseMethodNotAllowed + " response)"
	case err != nil:
		t.Errorf("%s: finding its operation in the document: %v", exchange, err)
		return
	}
	opts := v.options()
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(respBody)),
		Options:                opts,
	}
	documented := route.Operation.Responses.Status(resp.StatusCode)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		if documented == nil {
			exchange += ", a status the operation does not list (it lists " + strings.Join(route.Operation.Responses.Keys(), ", ") + ")"
		}
		t.Errorf("%s: the response does not match the document: %v\nbody: %s", exchange, err, excerpt(respBody))
	}
	if ref := documented; ref != nil && ref.Value != nil && len(ref.Value.Content) == 0 && len(respBody) > 0 {
		t.Errorf("%s: the document gives this response no body, but it has %d bytes: %s", exchange, len(respBody), excerpt(respBody))
	}
	if routed && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if err := v.checkRequest(req, reqBody, route, params); err != nil {
			t.Errorf("%s: the request succeeded, but the document refuses it: %v", exchange, err)
		}
	}
}

// checkRequest validates a request the server accepted.
func (v *Validator) checkRequest(req *http.Request, body []byte, route *routers.Route, params map[string]string) error {
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(body))
	opts := v.options()
	opts.SkipSettingDefaults = true // never change the caller's request
	opts.AuthenticationFunc = bearerPresent
	if rb := route.Operation.RequestBody; rb != nil && rb.Value != nil && len(body) > 0 {
		contentType := r.Header.Get("Content-Type")
		if rb.Value.Content.Get(contentType) == nil {
			return fmt.Errorf("Content-Type %q is not one of the operation's: %s", contentType, strings.Join(slices.Sorted(maps.Keys(rb.Value.Content)), ", "))
		}
		// openapi3filter decodes JSON bodies only (of the media types
		// sluice takes); the others, such as NDJSON, are checked by type.
		if media, _, err := mime.ParseMediaType(contentType); err != nil || media != "application/json" {
			opts.ExcludeRequestBody = true
		}
	}
	return openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route, Options: opts,
	})
}

// options are those of every validation: every error, every status checked,
// and the format uri asserted ("a full URL") along with date-time.
func (v *Validator) options() *openapi3filter.Options {
	opts := &openapi3filter.Options{
		IncludeResponseStatus:   true,
		MultiError:              true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(checkFullURL))},
	}
	opts.WithCustomSchemaErrorFunc(schemaErrorMessage)
	return opts
}

// schemaErrorMessage says where a schema error is and what it is, without
// the dumps of the schema and the value that make the default message long.
func schemaErrorMessage(err *openapi3.SchemaError) string {
	return fmt.Sprintf("at /%s: %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
}

// checkFullURL is the format uri: an absolute http or https URL with a host.
func checkFullURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("%q is not a full http or https URL", s)
	}
	return nil
}

// bearerPresent is the security check of a request: an Authorization
// header with a bearer token. Whether the key is valid is the server's to
// say.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme := in.SecurityScheme
	if scheme == nil || scheme.Type != "http" || !strings.EqualFold(scheme.Scheme, "bearer") {
		return fmt.Errorf("security scheme %q is not one openapitest checks (only http bearer)", in.SecuritySchemeName)
	}
	kind, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(kind, "Bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no Authorization: Bearer <token> header")
	}
	return nil
}

// excerpt returns the start of a body, for messages.
func excerpt(body []byte) string {
	const max = 512
	if len(body) > max {
		return fmt.Sprintf("%s... (%d bytes)", body[:max], len(body))
	}
	return string(body)
}
