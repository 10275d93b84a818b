// Package openapitest checks, in tests, that sluice's HTTP API answers as its
// OpenAPI 3.1 document (docs/openapi.yaml) says.
//
// Load parses the document and validates it, then Check compares one
// exchange with the document, and Transport checks every exchange of an
// http.Client:
//
//	doc := openapitest.Load(t, "../docs/openapi.yaml")
//	client := &http.Client{Transport: doc.Transport(t, nil)}
//	resp, err := client.Do(req) // a response that breaks the document fails t
//
// A response must belong to an operation of the document, have one of its
// statuses, its required headers and a body of its schema (JSON Schema
// 2020-12). A request to a path the document does not list must be answered
// with its NotFound response, and a method a listed path does not take with
// its MethodNotAllowed response. A success (2xx) also needs a request the
// document accepts: the server must not take what the document refuses.
//
// The validation is github.com/getkin/kin-openapi's (openapi3 and
// openapi3filter). This package is for tests only: it reports to a
// testing.TB, and it is not a request filter for the server.
package openapitest
