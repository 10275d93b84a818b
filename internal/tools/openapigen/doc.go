// Command openapigen writes docs/openapi.yaml, the OpenAPI document of
// sluice's HTTP API, from docs/openapi/source.yaml and the resource
// families declared in package resource. The source holds what no family
// declares (info, conventions, tags, the paths that are no family's CRUD,
// components), and a marker line where each family's two paths go:
//
//	# openapigen: paths of /api_keys
//
// A family's paths are written from its resource.Doc: the operations it
// has, their prose, and the standard parameters and error responses of
// each kind of operation. It is not for the paths of a family's own
// subresources (/event_subscriptions/{id}/sources, a route's modules):
// those are written in the source.
//
// go generate ./... runs it (the directive is in package docs); a test
// of this package fails when docs/openapi.yaml is not what it writes.
package main
