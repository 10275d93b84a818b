// Command openapigen writes docs/openapi.yaml, the OpenAPI document of
// sluice's HTTP API, from docs/openapi/source.yaml, the resource families
// declared in package resource and the source of package apiwire. The
// source holds what no family declares (info, conventions, tags, the
// paths that are no family's CRUD, the components the families share),
// and marker lines where each family's paths, schemas and response go:
//
//	# openapigen: paths of /api_keys
//	# openapigen: schemas of /api_keys
//	# openapigen: responses of /api_keys
//
// A family's paths are written from its resource.Doc: the operations it
// has, their prose, and the standard parameters and error responses of
// each kind of operation. It is not for the paths of a family's own
// subresources (/event_subscriptions/{id}/sources, a route's modules):
// those are written in the source.
//
// A family's schemas (<Stem>, <Stem>Created, <Stem>Create, <Stem>Update,
// <Stem>List) and its response <Stem>200 are written when its Doc names
// its types of package apiwire (resource.Schemas): a property for each
// JSON field, in order, its schema from the field's Go type and its
// description from the field's doc comment in apiwire's source, which
// //openapi:ref and //openapi:schema directives complete (see fieldDoc);
// the family's Fields say which body takes a field, which are required
// at create and which are shown once, and give each its limit (Max): its
// maxLength, or the maxLength that the shared schema it refers to must
// have. The schemas of a family without such types are written in the
// source.
//
// go generate ./... runs it (the directive is in package docs); a test
// of this package fails when docs/openapi.yaml is not what it writes.
package main
