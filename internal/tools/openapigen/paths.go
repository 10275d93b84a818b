package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/internal/resource"
)

// The error statuses every operation of a kind answers, and the order of
// all of them in an operation's responses.
var (
	errorOrder = []int{400, 401, 404, 409, 415, 413, 408, 429, 500, 503}
	readErrors = []int{400, 401, 429, 500, 503}
	bodyErrors = []int{400, 401, 409, 415, 413, 408, 429, 500, 503}
)

// errorResponses names the response of the components of each error
// status.
var errorResponses = map[int]string{
	400: "BadRequest", 401: "Unauthorized", 404: "NotFound", 408: "RequestTimeout", 409: "Conflict",
	413: "PayloadTooLarge", 415: "UnsupportedMediaType", 429: "TooManyRequests",
	500: "InternalError", 503: "ServiceUnavailable",
}

// paths writes the paths of a family, the YAML of the document's paths at
// their indentation.
type paths struct {
	out *bytes.Buffer
	doc resource.Doc
}

// writePaths writes the family's paths: Path with its create and list,
// then Path/{id} with its get, update and delete, each that it has.
func writePaths(out *bytes.Buffer, f resource.Spec) {
	p := paths{out: out, doc: f.Doc}
	d := f.Doc
	if d.Create != nil || d.List != nil {
		p.path(f.Path, false)
		if d.Create != nil {
			p.create(d.Create)
		}
		if d.List != nil {
			p.list(d.List)
		}
	}
	if d.Get != nil || d.Update != nil || d.Delete != nil {
		if d.Create != nil || d.List != nil {
			p.line(0, "")
		}
		p.path(f.Path+"/{id}", true)
		if d.Get != nil {
			p.operation("get", "get"+d.Stem, d.Get)
			p.responses(ref("200", "responses", d.Stem+"200"), d.Get, append([]int{404}, readErrors...)...)
		}
		if d.Update != nil {
			p.operation("patch", "update"+d.Stem, d.Update)
			p.requestBody(d.Stem + "Update")
			p.responses(ref("200", "responses", d.Stem+"200"), d.Update, append([]int{404}, bodyErrors...)...)
		}
		if d.Delete != nil {
			p.operation("delete", "delete"+d.Stem, d.Delete)
			p.responses(ref("204", "responses", "Deleted"), d.Delete, append([]int{404}, readErrors...)...)
		}
	}
}

// path writes a path and its parameters: the service version, the
// parent's id and, of an item, its id.
func (p paths) path(path string, item bool) {
	p.line(1, path+":")
	p.line(2, "parameters:")
	p.line(3, `- $ref: "#/components/parameters/ServiceVersion"`)
	if p.doc.Parent != "" {
		p.line(3, refValue("- $ref", "parameters", p.doc.Parent))
	}
	switch {
	case !item:
	case p.doc.IDParameter != "":
		p.line(3, refValue("- $ref", "parameters", p.doc.IDParameter))
	default:
		p.line(3, "- name: id")
		p.line(4, "in: path")
		p.line(4, "required: true")
		p.line(4, "description: The id of the "+p.doc.Item+".")
		p.line(4, "schema:")
		p.line(5, refValue("$ref", "schemas", p.doc.IDSchemaName()))
	}
}

func (p paths) create(op *resource.Op) {
	p.operation("post", "create"+p.doc.Stem, op)
	p.requestBody(p.doc.Stem + "Create")
	p.responses(p.answer("201", op.Answer, op.Answer.Schema), op, bodyErrors...)
}

func (p paths) list(op *resource.Op) {
	p.operation("get", "list"+p.doc.Plural, op)
	p.line(3, "parameters:")
	p.line(4, `- $ref: "#/components/parameters/Limit"`)
	p.line(4, `- $ref: "#/components/parameters/Filter"`)
	p.line(4, "- name: before_id")
	p.line(5, "in: query")
	p.line(5, "description: List the "+p.doc.Items+" older than this one (the last id of the previous page).")
	p.line(5, "schema:")
	p.line(6, refValue("$ref", "schemas", p.doc.IDSchemaName()))
	p.responses(p.answer("200", op.Answer, p.doc.Stem+"List"), op, readErrors...)
}

// operation writes the start of an operation: its method, tag, id,
// summary and description.
func (p paths) operation(method, id string, op *resource.Op) {
	p.line(2, method+":")
	p.line(3, "tags: ["+p.doc.Tag+"]")
	p.line(3, "operationId: "+id)
	p.line(3, "summary: "+op.Summary)
	switch {
	case op.Description == "":
	case strings.HasSuffix(op.Description, "\n"):
		p.line(3, "description: |")
		for l := range strings.Lines(op.Description) {
			p.line(4, strings.TrimSuffix(l, "\n"))
		}
	default:
		p.line(3, "description: "+op.Description)
	}
}

func (p paths) requestBody(schema string) {
	p.line(3, "requestBody:")
	p.line(4, "required: true")
	p.line(4, "content:")
	p.line(5, "application/json:")
	p.line(6, "schema:")
	p.line(7, refValue("$ref", "schemas", schema))
}

// response is the YAML of a success response, at the indentation of an
// operation's responses.
type response []string

// ref is a response that is a response of the components.
func ref(status, kind, name string) response {
	return response{`"` + status + `":`, "  " + refValue("$ref", kind, name)}
}

// answer is the response of a create or a list: a response of the
// components, or one written in place with schema.
func (p paths) answer(status string, a resource.Answer, schema string) response {
	if a.Response != "" {
		return ref(status, "responses", a.Response)
	}
	return response{
		`"` + status + `":`,
		"  description: " + a.Description,
		"  headers:",
		"    Service-Operation-Id:",
		"      " + refValue("$ref", "headers", "OperationId"),
		"  content:",
		"    application/json:",
		"      schema:",
		"        " + refValue("$ref", "schemas", schema),
	}
}

// responses writes an operation's responses: success, then the error
// statuses of its kind, the op's own and, of a nested family, 404, in
// errorOrder.
func (p paths) responses(success response, op *resource.Op, errs ...int) {
	p.line(3, "responses:")
	for _, l := range success {
		p.line(4, l)
	}
	errs = append(slices.Clone(errs), op.Errors...)
	if p.doc.Parent != "" {
		errs = append(errs, 404)
	}
	for _, status := range errorOrder {
		if slices.Contains(errs, status) {
			p.line(4, fmt.Sprintf(`"%d":`, status))
			p.line(5, refValue("$ref", "responses", errorResponses[status]))
		}
	}
}

// refValue returns key: "#/components/kind/name".
func refValue(key, kind, name string) string {
	return fmt.Sprintf(`%s: "#/components/%s/%s"`, key, kind, name)
}

// line writes s at depth levels of two spaces; "" writes an empty line.
func (p paths) line(depth int, s string) {
	if s != "" {
		p.out.WriteString(strings.Repeat("  ", depth))
		p.out.WriteString(s)
	}
	p.out.WriteByte('\n')
}
