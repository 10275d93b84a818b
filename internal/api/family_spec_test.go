package api

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	declared "github.com/sluicehq/sluice/internal/resource"
)

// specs are the declarations of package resource of the families the API
// routes.
func specs() []declared.Spec {
	return []declared.Spec{declared.APIKeys(), declared.EventDestinations(), declared.EventSubscriptions(), declared.BotUsers(), declared.Credentials(), declared.ReservedDomains(), declared.AgentIngresses(), declared.AppSessions(), declared.HTTPSEdges(), declared.HTTPSEdgeRoutes(), declared.TunnelSessions(), declared.Endpoints(), declared.TunnelGroupBackends(), declared.TLSCertificates()}
}

// TestFamiliesMatchSpecs checks the families the API routes against their
// declarations in package resource: see checkSpecs.
func TestFamiliesMatchSpecs(t *testing.T) {
	for _, p := range checkSpecs(routedFamilies(t), specs()) {
		t.Error(p)
	}
}

// TestFamilySpecDriftFails plants drifts in the declarations and checks
// that checkSpecs reports each.
func TestFamilySpecDriftFails(t *testing.T) {
	tests := []struct {
		name  string
		plant func(specs []declared.Spec)
		want  string
	}{
		{"field not in the create body", func(specs []declared.Spec) {
			specs[3].Fields[1].Create = true // bot users' active
		}, "POST /bot_users: the body takes the fields [name] of apiwire.BotUserInput, the declaration's Create fields [name active]"},
		{"field not in the update body", func(specs []declared.Spec) {
			specs[1].Fields = append(specs[1].Fields, declared.Field{Name: "region", Kind: declared.String, Update: true})
		}, "PATCH /event_destinations/{id}: the body takes the fields [description metadata format target] of api.destinationInput, the declaration's Update fields [description metadata format target region]"},
		{"prefix changed", func(specs []declared.Spec) {
			specs[0].Prefix = "key_"
		}, `/api_keys: the API checks ids of prefix "ak_", the declaration says "key_"`},
		{"list key changed", func(specs []declared.Spec) {
			specs[2].ListKey = "subscriptions"
		}, `/event_subscriptions: the API's pages hold "event_subscriptions", the declaration says "subscriptions"`},
		{"family not routed", func(specs []declared.Spec) {
			specs[0].Path = "/widgets"
		}, "/widgets is declared in package resource but not routed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := specs()
			tt.plant(s)
			problems := checkSpecs(routedFamilies(t), s)
			if !slices.Contains(problems, tt.want) {
				t.Errorf("drift not reported as %q; reported:\n%s", tt.want, strings.Join(problems, "\n"))
			}
		})
	}
}

// checkSpecs returns how the families routed differ from their
// declarations: each declared family must be routed, with its prefix and
// list key, and the JSON fields of its create and update bodies must be
// its Create and Update fields, in order.
func checkSpecs(fams []familyDoc, specs []declared.Spec) []string {
	var problems []string
	for _, spec := range specs {
		i := slices.IndexFunc(fams, func(f familyDoc) bool { return f.path == spec.Path })
		if i < 0 {
			problems = append(problems, spec.Path+" is declared in package resource but not routed")
			continue
		}
		f := fams[i]
		if f.prefix != spec.Prefix {
			problems = append(problems, fmt.Sprintf("%s: the API checks ids of prefix %q, the declaration says %q", spec.Path, f.prefix, spec.Prefix))
		}
		if f.listKey != spec.ListKey {
			problems = append(problems, fmt.Sprintf("%s: the API's pages hold %q, the declaration says %q", spec.Path, f.listKey, spec.ListKey))
		}
		for _, body := range []struct {
			what   string
			typ    reflect.Type
			fields []string // nil: not served, and takes no field
			verb   string
			wants  func(declared.Field) bool
		}{
			{"POST " + spec.Path, f.create, f.createFields, "Create", func(fl declared.Field) bool { return fl.Create }},
			{"PATCH " + spec.Path + "/{id}", f.update, f.updateFields, "Update", func(fl declared.Field) bool { return fl.Update }},
		} {
			want := fieldNames(spec, body.wants)
			if !slices.Equal(body.fields, want) {
				problems = append(problems, fmt.Sprintf("%s: the body takes the fields %v of %v, the declaration's %s fields %v", body.what, body.fields, body.typ, body.verb, want))
			}
		}
	}
	for _, f := range fams {
		if !slices.ContainsFunc(specs, func(s declared.Spec) bool { return s.Path == f.path }) {
			problems = append(problems, f.path+" is routed but not declared in package resource")
		}
	}
	return problems
}

// fieldNames returns the names of the fields of spec that keep returns
// true of, in order.
func fieldNames(spec declared.Spec, keep func(declared.Field) bool) []string {
	var out []string
	for _, f := range spec.Fields {
		if keep(f) {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestOpenAPIMatchesSpecs checks the request and response schemas of
// docs/openapi.yaml against the declarations of the families: see
// checkSpecLimits.
func TestOpenAPIMatchesSpecs(t *testing.T) {
	for _, p := range checkSpecLimits(loadOpenAPI(t), specs()) {
		t.Error(p)
	}
}

// TestOpenAPISpecDriftFails plants drifts in docs/openapi.yaml and checks
// that checkSpecLimits reports each.
func TestOpenAPISpecDriftFails(t *testing.T) {
	tests := []struct {
		name  string
		plant func(doc *yaml.Node)
		want  string
	}{
		{"limit changed", func(doc *yaml.Node) {
			node(doc, "components", "schemas", "Description", "maxLength").Value = "256"
		}, "POST /api_keys request: description has maxLength 256, the declaration's Max 255"},
		{"limit dropped", func(doc *yaml.Node) {
			deleteKey(node(doc, "components", "schemas", "BotUserName"), "maxLength")
		}, "PATCH /bot_users/{id} request: name has maxLength 0, the declaration's Max 255"},
		{"limit on a field without one", func(doc *yaml.Node) {
			format := node(doc, "components", "schemas", "FormatInput")
			format.Content = append(format.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "maxLength"}, &yaml.Node{Kind: yaml.ScalarNode, Value: "4"})
		}, "POST /event_destinations request: format has maxLength 4, the declaration's Max 0"},
		{"required dropped", func(doc *yaml.Node) {
			deleteKey(node(doc, "components", "schemas", "BotUserCreate"), "required")
		}, "POST /bot_users request: required [], the declaration's Required fields [name]"},
		{"required added", func(doc *yaml.Node) {
			node(doc, "components", "schemas", "EventDestinationCreate", "required").Content[0].Value = "format"
		}, "POST /event_destinations request: required [format], the declaration's Required fields [target]"},
		{"shown once shown again", func(doc *yaml.Node) {
			node(doc, "components", "schemas", "APIKey", "properties", "token", "type").Value = "string"
		}, `GET /api_keys/{id} 200: token, shown once, has type "string", want "null"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := loadOpenAPI(t)
			tt.plant(doc)
			problems := checkSpecLimits(doc, specs())
			if !slices.Contains(problems, tt.want) {
				t.Errorf("drift not reported as %q; reported:\n%s", tt.want, strings.Join(problems, "\n"))
			}
		})
	}
}

// checkSpecLimits returns how the document differs from the declarations:
// each field a request body accepts has the maxLength of its Max (none for
// 0; in both units, as JSON Schema has no byte length), the required fields
// of a create are its Required ones and an update requires none, and a
// field shown once is null in the answer to a get, and not in the answer to
// the create.
func checkSpecLimits(doc *yaml.Node, specs []declared.Spec) []string {
	var problems []string
	for _, spec := range specs {
		item := spec.Path + "/{id}"
		for _, req := range []struct {
			method, path string
			accepts      func(declared.Field) bool
			required     []string
		}{
			{"post", spec.Path, func(f declared.Field) bool { return f.Create }, fieldNames(spec, func(f declared.Field) bool { return f.Required })},
			{"patch", item, func(f declared.Field) bool { return f.Update }, nil},
		} {
			what := strings.ToUpper(req.method) + " " + req.path + " request"
			schema := resolve(doc, node(doc, "paths", req.path, req.method, "requestBody", "content", "application/json", "schema"))
			if got := values(node(schema, "required")); !slices.Equal(got, req.required) {
				problems = append(problems, fmt.Sprintf("%s: required %v, the declaration's Required fields %v", what, orNone(got), orNone(req.required)))
			}
			for _, f := range spec.Fields {
				if !req.accepts(f) {
					continue
				}
				if got := maxLength(resolve(doc, node(schema, "properties", f.Name))); got != f.Max {
					problems = append(problems, fmt.Sprintf("%s: %s has maxLength %d, the declaration's Max %d", what, f.Name, got, f.Max))
				}
			}
		}
		for _, f := range spec.Fields {
			if !f.ShownOnce {
				continue
			}
			for _, resp := range []struct {
				what, path, method, status string
				null                       bool
			}{
				{"GET " + item + " 200", item, "get", "200", true},
				{"POST " + spec.Path + " 201", spec.Path, "post", "201", false},
			} {
				schema := node(resolve(doc, node(doc, "paths", resp.path, resp.method, "responses", resp.status)), "content", "application/json", "schema")
				typ := ""
				if n := node(resolve(doc, node(resolve(doc, schema), "properties", f.Name)), "type"); n != nil {
					typ = n.Value
				}
				if (typ == "null") != resp.null {
					want := `"null"`
					if !resp.null {
						want = `not "null"`
					}
					problems = append(problems, fmt.Sprintf("%s: %s, shown once, has type %q, want %s", resp.what, f.Name, typ, want))
				}
			}
		}
	}
	return problems
}

// maxLength returns the maxLength of the schema n, 0 for none.
func maxLength(n *yaml.Node) int {
	v := node(n, "maxLength")
	if v == nil {
		return 0
	}
	max, err := strconv.Atoi(v.Value)
	if err != nil {
		return -1
	}
	return max
}

// values returns the items of the sequence n.
func values(n *yaml.Node) []string {
	var out []string
	for i := 0; n != nil && i < len(n.Content); i++ {
		out = append(out, n.Content[i].Value)
	}
	return out
}

// orNone returns names, [] rather than nil.
func orNone(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
