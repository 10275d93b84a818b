package filters

import (
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
)

// referenceChecker finds the references to ev in a parsed expression that
// are not a filterable field, so that Compile can say which field is wrong
// and why, where CEL's checker only knows that "ev" or "ev.conn" is not a
// declared variable.
type referenceChecker struct {
	kind   *kindEnv
	info   *ast.SourceInfo
	issues []Issue
}

// checkReferences returns an issue for each reference to ev in the parsed
// expression that is not a filterable field of the kind.
func (ke *kindEnv) checkReferences(parsed *cel.Ast) []Issue {
	a := parsed.NativeRep()
	c := referenceChecker{kind: ke, info: a.SourceInfo()}
	c.walk(a.Expr(), false)
	return c.issues
}

// walk visits e; shadowed is true inside a comprehension that names one of
// its own variables ev, where ev is not the event.
func (c *referenceChecker) walk(e ast.Expr, shadowed bool) {
	switch e.Kind() {
	case ast.IdentKind:
		if !shadowed && e.AsIdent() == evName {
			c.report(e.ID(), nil, "ev is the event's object and cannot be used whole")
		}
	case ast.SelectKind:
		if root, segs, testOnly, ok := evChain(e); ok && !shadowed {
			c.checkChain(root, segs, testOnly)
			return
		}
		c.walk(e.AsSelect().Operand(), shadowed)
	case ast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			c.walk(call.Target(), shadowed)
		}
		for _, arg := range call.Args() {
			c.walk(arg, shadowed)
		}
	case ast.ListKind:
		for _, elem := range e.AsList().Elements() {
			c.walk(elem, shadowed)
		}
	case ast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			c.walk(entry.AsMapEntry().Key(), shadowed)
			c.walk(entry.AsMapEntry().Value(), shadowed)
		}
	case ast.StructKind:
		for _, field := range e.AsStruct().Fields() {
			c.walk(field.AsStructField().Value(), shadowed)
		}
	case ast.ComprehensionKind:
		comp := e.AsComprehension()
		c.walk(comp.IterRange(), shadowed)
		c.walk(comp.AccuInit(), shadowed)
		inner := shadowed || comp.IterVar() == evName || comp.AccuVar() == evName ||
			(comp.HasIterVar2() && comp.IterVar2() == evName)
		c.walk(comp.LoopCondition(), inner)
		c.walk(comp.LoopStep(), inner)
		c.walk(comp.Result(), inner)
	}
}

// evChain returns the id of the ident ev and the field names of a chain of
// selections such as ev.conn.client_ip, and whether the outermost selection
// is a presence test (has()). ok is false if e is not such a chain.
func evChain(e ast.Expr) (root int64, segs []string, testOnly, ok bool) {
	testOnly = e.AsSelect().IsTestOnly()
	for e.Kind() == ast.SelectKind {
		sel := e.AsSelect()
		if sel.IsTestOnly() && len(segs) > 0 {
			return 0, nil, false, false
		}
		segs = append(segs, sel.FieldName())
		e = sel.Operand()
	}
	if e.Kind() != ast.IdentKind || e.AsIdent() != evName {
		return 0, nil, false, false
	}
	slices.Reverse(segs)
	return e.ID(), segs, testOnly, true
}

// checkChain reports a chain of selections from ev unless it starts with a
// filterable field; what follows a field is for CEL's checker to judge.
func (c *referenceChecker) checkChain(root int64, segs []string, testOnly bool) {
	for n := len(segs); n > 0; n-- {
		if c.kind.variableIndex(varPrefix+strings.Join(segs[:n], ".")) < 0 {
			continue
		}
		if testOnly && n == len(segs) {
			c.report(root, segs, "has() does not apply to the event's fields: a field the event lacks filters as its zero value (\"\", 0, false)")
		}
		return
	}
	path := strings.Join(segs, ".")
	for n := len(segs); n > 0; n-- {
		prefix := strings.Join(segs[:n], ".")
		if _, ok := c.kind.kind.Field(prefix); ok {
			c.report(root, segs, fmt.Sprintf("%s is a field of %s but not one a filter may use", prefix, c.kind.name))
			return
		}
	}
	if c.kind.selection.isGroup(path) {
		c.report(root, segs, fmt.Sprintf("%s is a group of fields, not a field", path))
		return
	}
	c.report(root, segs, fmt.Sprintf("%s has no field %s", c.kind.name, path))
}

// report adds an issue about the reference ev.segs at the ident ev.
func (c *referenceChecker) report(root int64, segs []string, why string) {
	name := strings.Join(append([]string{evName}, segs...), ".")
	c.issues = append(c.issues, issueAt(c.info.GetStartLocation(root), fmt.Sprintf(
		"undeclared reference to '%s': %s; a filter may use only the filterable fields %s",
		name, why, c.kind.varList)))
}
