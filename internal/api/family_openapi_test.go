package api

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/producer"
)

// TestOpenAPIMatchesFamilies checks docs/openapi.yaml against the
// declarations of the resource families the API routes, so that they
// cannot drift apart: see checkFamilies.
func TestOpenAPIMatchesFamilies(t *testing.T) {
	doc := loadOpenAPI(t)
	fams := routedFamilies(t)
	if len(fams) == 0 {
		t.Fatal("the server routed no resource family")
	}
	for _, p := range checkFamilies(doc, fams) {
		t.Error(p)
	}
}

// TestOpenAPIFamilyDriftFails plants drifts in docs/openapi.yaml and
// checks that checkFamilies reports each.
func TestOpenAPIFamilyDriftFails(t *testing.T) {
	fams := routedFamilies(t)
	tests := []struct {
		name  string
		plant func(doc *yaml.Node)
		want  string
	}{
		{"property missing", func(doc *yaml.Node) {
			deleteKey(node(doc, "components", "schemas", "APIKey", "properties"), "metadata")
		}, "GET /api_keys/{id} 200: properties [id uri description created_at token], want the fields of apiwire.APIKey [id uri description metadata created_at token]"},
		{"properties reordered", func(doc *yaml.Node) {
			props := node(doc, "components", "schemas", "EventDestination", "properties")
			c := props.Content
			c[0], c[1], c[2], c[3] = c[2], c[3], c[0], c[1]
		}, "POST /event_destinations 201: properties [uri id created_at description metadata format target], want the fields of api.destinationBody [id uri created_at description metadata format target]"},
		{"list key renamed", func(doc *yaml.Node) {
			node(doc, "components", "schemas", "EventSubscriptionList", "properties").Content[0].Value = "subscriptions"
		}, "GET /event_subscriptions 200: properties [subscriptions uri next_page_uri], want [event_subscriptions uri next_page_uri]"},
		{"request field missing", func(doc *yaml.Node) {
			deleteKey(node(doc, "components", "schemas", "EventDestinationUpdate", "properties"), "format")
		}, "PATCH /event_destinations/{id} request: properties [id description metadata target], want the fields of api.destinationInput after [id]: [id description metadata format target]"},
		{"filter parameter missing", func(doc *yaml.Node) {
			params := node(doc, "paths", "/bot_users", "get", "parameters")
			params.Content = slices.DeleteFunc(params.Content, func(p *yaml.Node) bool {
				return node(p, "$ref") != nil && strings.HasSuffix(node(p, "$ref").Value, "/Filter")
			})
		}, "GET /bot_users: no filter query parameter in docs/openapi.yaml (#/components/parameters/Filter)"},
		{"method missing", func(doc *yaml.Node) {
			deleteKey(node(doc, "paths", "/api_keys/{id}"), "patch")
		}, "PATCH /api_keys/{id} is routed but not in docs/openapi.yaml"},
		{"method not routed", func(doc *yaml.Node) {
			p := node(doc, "paths", "/api_keys")
			p.Content = append(p.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "put"}, node(p, "post"))
		}, "PUT /api_keys is in docs/openapi.yaml but not routed"},
		{"success status changed", func(doc *yaml.Node) {
			node(doc, "paths", "/event_destinations", "post", "responses").Content[0].Value = "200"
		}, "POST /event_destinations: no 201 response in docs/openapi.yaml"},
		{"family not declared", func(doc *yaml.Node) {
			paths := node(doc, "paths")
			paths.Content = append(paths.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Value: "/widgets"}, node(paths, "/api_keys"),
				&yaml.Node{Kind: yaml.ScalarNode, Value: "/widgets/{id}"}, node(paths, "/api_keys/{id}"))
		}, "/widgets is a resource family in docs/openapi.yaml that the API does not declare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := loadOpenAPI(t)
			tt.plant(doc)
			problems := checkFamilies(doc, fams)
			if !slices.Contains(problems, tt.want) {
				t.Errorf("drift not reported as %q; reported:\n%s", tt.want, strings.Join(problems, "\n"))
			}
		})
	}
}

// routedFamilies returns the families a server with every store routes.
func routedFamilies(t *testing.T) []familyDoc {
	t.Helper()
	var st *store.Store // never called: the routes are only declared
	s, err := New(Config{BaseURL: "http://sluice.test"}, Deps{Keys: st, Publisher: (*producer.Producer)(nil),
		Destinations: st, Subscriptions: st, AgentIngresses: st, AppSessions: st, APIKeys: st, BotUsers: st, Credentials: st, HTTPSEdges: st, ReservedDomains: st, Tunnels: st, TunnelGroupBackends: st})
	if err != nil {
		t.Fatal(err)
	}
	return s.families
}

func loadOpenAPI(t *testing.T) *yaml.Node {
	t.Helper()
	raw, err := os.ReadFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// familyPath matches the paths of the document that are a family's:
// "/name/{id}" of the family "/name".
var familyPath = regexp.MustCompile(`^((?:/[a-z_]+)+?)(/\{id\})?$`)

// checkFamilies returns how the document differs from the families: every
// route of a family must be in the document with its success status, and
// nothing else on its paths; the properties of its responses (and of a
// page's items) must be the body type's JSON fields in order, those of its
// requests the input types' fields; and every family of the document (a
// path /name/{id}) must be declared.
func checkFamilies(doc *yaml.Node, fams []familyDoc) []string {
	var problems []string
	declared := map[string]bool{}
	for _, f := range fams {
		declared[f.path] = true
		item := f.path + "/{id}"
		for _, op := range []struct {
			method, path, status string
			in                   reflect.Type // nil: no body
			fields               []string     // the fields of in the body takes
			echoes               []string     // the members of in's body before its fields
			list                 bool
		}{
			{"post", f.path, "201", f.create, f.createFields, f.createEchoes, false},
			{"get", f.path, "200", nil, nil, nil, true},
			{"get", item, "200", nil, nil, nil, false},
			{"patch", item, "200", f.update, f.updateFields, f.updateEchoes, false},
			{"delete", item, "204", nil, nil, nil, false},
		} {
			what := strings.ToUpper(op.method) + " " + op.path
			if !f.routes(op.method) {
				continue
			}
			o := node(doc, "paths", op.path, op.method)
			if o == nil {
				problems = append(problems, what+" is routed but not in docs/openapi.yaml")
				continue
			}
			resp := resolve(doc, node(o, "responses", op.status))
			if resp == nil {
				problems = append(problems, fmt.Sprintf("%s: no %s response in docs/openapi.yaml", what, op.status))
				continue
			}
			if op.in != nil {
				got := properties(doc, node(o, "requestBody", "content", "application/json", "schema"))
				if want := append(slices.Clone(op.echoes), op.fields...); !slices.Equal(got, want) {
					problems = append(problems, fmt.Sprintf("%s request: properties %v, want the fields of %v after %v: %v", what, got, op.in, op.echoes, want))
				}
			}
			if op.status == "204" {
				continue
			}
			if op.list && !hasQueryParameter(doc, o, "filter") {
				problems = append(problems, what+": no filter query parameter in docs/openapi.yaml (#/components/parameters/Filter)")
			}
			schema := node(resp, "content", "application/json", "schema")
			got, want := properties(doc, schema), jsonNames(f.body)
			if op.list {
				if w := []string{f.listKey, "uri", "next_page_uri"}; !slices.Equal(got, w) {
					problems = append(problems, fmt.Sprintf("%s %s: properties %v, want %v", what, op.status, got, w))
					continue
				}
				got = properties(doc, node(resolve(doc, schema), "properties", f.listKey, "items"))
			}
			if !slices.Equal(got, want) {
				problems = append(problems, fmt.Sprintf("%s %s: properties %v, want the fields of %v %v", what, op.status, got, f.body, want))
			}
		}
		for path, routed := range map[string][]string{f.path: {"post", "get"}, item: {"get", "patch", "delete"}} {
			for _, method := range keys(node(doc, "paths", path)) {
				if method != "parameters" && (!slices.Contains(routed, method) || !f.routes(method)) {
					problems = append(problems, fmt.Sprintf("%s %s is in docs/openapi.yaml but not routed", strings.ToUpper(method), path))
				}
			}
		}
	}
	for _, p := range keys(node(doc, "paths")) {
		if m := familyPath.FindStringSubmatch(p); m != nil && m[2] != "" && !declared[m[1]] {
			problems = append(problems, m[1]+" is a resource family in docs/openapi.yaml that the API does not declare")
		}
	}
	return problems
}

// routes reports whether the family serves the method (lower case): a
// family without create, update or delete has no POST, PATCH or DELETE.
func (f familyDoc) routes(method string) bool {
	switch method {
	case "post":
		return f.create != nil
	case "patch":
		return f.update != nil
	case "delete":
		return f.delete
	}
	return true
}

// hasQueryParameter reports whether the operation o takes the query
// parameter name.
func hasQueryParameter(doc, o *yaml.Node, name string) bool {
	params := node(o, "parameters")
	for i := 0; params != nil && i < len(params.Content); i++ {
		p := resolveParameter(doc, params.Content[i])
		if n, in := node(p, "name"), node(p, "in"); n != nil && in != nil && n.Value == name && in.Value == "query" {
			return true
		}
	}
	return false
}

// resolveParameter follows the local $ref of a parameter, if any.
func resolveParameter(doc, p *yaml.Node) *yaml.Node {
	if ref := node(p, "$ref"); ref != nil {
		return node(doc, strings.Split(strings.TrimPrefix(ref.Value, "#/"), "/")...)
	}
	return p
}

// node returns the value at the path of mapping keys below n, or nil.
func node(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// keys returns the keys of the mapping n, in order.
func keys(n *yaml.Node) []string {
	var out []string
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}

func deleteKey(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = slices.Delete(n.Content, i, i+2)
			return
		}
	}
}

// resolve follows the local $ref of n ("#/components/..."), if any.
func resolve(doc, n *yaml.Node) *yaml.Node {
	for n != nil {
		ref := node(n, "$ref")
		if ref == nil || node(n, "properties") != nil {
			return n
		}
		n = node(doc, strings.Split(strings.TrimPrefix(ref.Value, "#/"), "/")...)
	}
	return n
}

// properties returns the property names of the schema n, in order.
func properties(doc, n *yaml.Node) []string {
	return keys(node(resolve(doc, n), "properties"))
}

// jsonNames returns the JSON names of the fields of the struct type t, in
// order.
func jsonNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}
