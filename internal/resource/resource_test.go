package resource_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/resource"
)

// TestSpecsAreWellFormed checks what every declaration must hold: an id
// prefix, a path and a list key; fields named once; a limit only on text,
// with its unit; required fields that a create accepts; and a usage that
// says a limit only of a field that has one.
func TestSpecsAreWellFormed(t *testing.T) {
	for _, s := range resource.Families() {
		if s.Prefix == "" || !strings.HasSuffix(s.Prefix, "_") || !strings.HasPrefix(s.Path, "/") || s.ListKey == "" {
			t.Errorf("%+v: want a prefix ending in _, a path and a list key", s)
		}
		seen := map[string]bool{}
		for _, f := range s.Fields {
			if seen[f.Name] {
				t.Errorf("%s: field %s declared twice", s.Path, f.Name)
			}
			seen[f.Name] = true
			if f.Max > 0 && (f.Kind != resource.String || (f.Unit != resource.Bytes && f.Unit != resource.Characters)) {
				t.Errorf("%s: %s has a limit, so it must be a string limited in bytes or characters: %+v", s.Path, f.Name, f)
			}
			if f.Required && !f.Create {
				t.Errorf("%s: %s is required at create, which does not accept it", s.Path, f.Name)
			}
			if strings.Contains(f.Usage, "{limit}") != (f.Max > 0 && f.Usage != "") {
				t.Errorf("%s: %s's usage %q must say its limit if and only if it has one", s.Path, f.Name, f.Usage)
			}
		}
	}
}

// TestDocsAreWellFormed checks what the document needs of every family's
// Doc: names, a tag, an operation, the nouns of the parameters it has and
// the answers of its create and list; and a path no other family has.
func TestDocsAreWellFormed(t *testing.T) {
	paths := map[string]bool{}
	for _, s := range resource.Families() {
		d := s.Doc
		if paths[s.Path] {
			t.Errorf("%s: two families have the path", s.Path)
		}
		paths[s.Path] = true
		if d.Stem == "" || d.Plural == "" || d.Tag == "" {
			t.Errorf("%s: want a stem, a plural and a tag: %+v", s.Path, d)
		}
		ops := []*resource.Op{d.Create, d.List, d.Get, d.Update, d.Delete}
		if !slices.ContainsFunc(ops, func(op *resource.Op) bool { return op != nil }) {
			t.Errorf("%s: no operation", s.Path)
		}
		for _, op := range ops {
			if op != nil && (op.Summary == "" || strings.Contains(op.Summary, "\n")) {
				t.Errorf("%s: summary %q, want one line", s.Path, op.Summary)
			}
			if op != nil && strings.Contains(strings.TrimSuffix(op.Description, "\n"), "\n") && !strings.HasSuffix(op.Description, "\n") {
				t.Errorf("%s: description %q has lines, so each must end in a newline", s.Path, op.Description)
			}
		}
		if (d.Get != nil || d.Update != nil || d.Delete != nil) && d.Item == "" && d.IDParameter == "" {
			t.Errorf("%s: an item path needs Item or IDParameter", s.Path)
		}
		if d.List != nil && (d.Items == "" || (d.List.Answer.Response == "") == (d.List.Answer.Description == "")) {
			t.Errorf("%s: a list needs Items and an answer, a response or a description", s.Path)
		}
		if a := d.Create; a != nil && (a.Answer.Response == "") == (a.Answer.Description == "" || a.Answer.Schema == "") {
			t.Errorf("%s: a create needs an answer, a response or a description and a schema", s.Path)
		}
	}
}

func TestFieldHelpSaysItsLimit(t *testing.T) {
	tests := []struct {
		spec  resource.Spec
		field string
		want  string
		limit string
	}{
		{resource.APIKeys(), "description", "free text for people, at most 255 bytes", "255 bytes"},
		{resource.EventSubscriptions(), "metadata", "free text for programs, such as JSON, at most 4096 characters", "4096 characters"},
		{resource.BotUsers(), "name", "the bot user's name, 1 to 255 bytes, unique in the account ignoring case", "255 bytes"},
		{resource.BotUsers(), "active", "whether the bot user is active: --active=false deactivates it", ""},
	}
	for _, tt := range tests {
		f := tt.spec.Field(tt.field)
		if got := f.Help(); got != tt.want {
			t.Errorf("%s %s: Help() = %q, want %q", tt.spec.Path, tt.field, got, tt.want)
		}
		if got := f.Limit(); tt.limit != "" && got != tt.limit {
			t.Errorf("%s %s: Limit() = %q, want %q", tt.spec.Path, tt.field, got, tt.limit)
		}
	}
}

func TestFieldOfAnUndeclaredNamePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `the family /bot_users has no field "nickname"`) {
			t.Errorf("recovered %v, want a panic naming the family and the field", r)
		}
	}()
	resource.BotUsers().Field("nickname")
}
