package schemas

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEventsDocIsUpToDate(t *testing.T) {
	path := filepath.Join("..", "docs", "events.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v\nGenerate it from the module's root with:\n\t%s", path, err, DocsCommand)
	}
	want := Default().Markdown()
	if !bytes.Equal(got, want) {
		line, gotLine, wantLine := firstDifference(got, want)
		t.Fatalf("docs/events.md differs from what the catalogue generates, from line %d:\n\tfile:      %q\n\tgenerated: %q\n"+
			"Regenerate it from the module's root with:\n\t%s", line, gotLine, wantLine, DocsCommand)
	}
}

// firstDifference returns the number of the first line where a and b differ
// and that line of each.
func firstDifference(a, b []byte) (int, string, string) {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}

func TestMarkdownNamesEveryKindAndField(t *testing.T) {
	c := Default()
	doc := string(c.Markdown())
	for _, k := range c.Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			if !strings.Contains(doc, "`"+k.Name+"`") {
				t.Errorf("the events reference does not name the kind")
			}
			for _, f := range k.Fields {
				if name := fieldName(&f); !strings.Contains(doc, "| "+name+" |") {
					t.Errorf("the events reference has no row for field %s", name)
				}
			}
		})
	}
}

func TestFieldName(t *testing.T) {
	tests := []struct {
		name  string
		field Field
		want  string
	}{
		{"plain", Field{Path: "conn.client_ip"}, "`conn.client_ip`"},
		{"in a list", Field{Path: "sources.type", InList: "sources"}, "`sources[].type`"},
		{"extension in a list", Field{Path: "sources.filter", InList: "sources", Extension: true}, "`sources[].filter` *(extension)*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldName(&tt.field); got != tt.want {
				t.Errorf("fieldName() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMarkdownText(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain words", "plain words"},
		{"a|b", `a\|b`},
		{"_acme-challenge.<domain>", `\_acme-challenge.\<domain\>`},
		{"*.sub.example.com", `\*.sub.example.com`},
		{"`code`", "\\`code\\`"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := markdownText(tt.in); got != tt.want {
				t.Errorf("markdownText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestMarkdownMarksSecrets checks that every secret field's row says it is
// always null, and that the families the text names as holding secrets are
// the ones that do.
func TestMarkdownMarksSecrets(t *testing.T) {
	c := Default()
	doc := string(c.Markdown())
	families := map[string]bool{}
	for _, k := range c.Kinds() {
		for _, f := range k.Fields {
			if !f.Secret {
				continue
			}
			families[k.Family] = true
			if row := "| " + fieldName(&f) + " | " + fieldType(&f) + " |"; !strings.Contains(doc, row) || !strings.Contains(row, "always null (secret)") {
				t.Errorf("%s: no row %q marking the secret", k.Name, row)
			}
		}
	}
	// The text names these; change it with them.
	want := map[string]bool{"api_key": true, "tunnel_credential": true, "event_destination": true}
	if len(families) != len(want) {
		t.Errorf("families with secrets: %v, the text names %v", families, want)
	}
	for family := range want {
		if !families[family] {
			t.Errorf("the text names %s as holding secrets, but none of its fields is secret", family)
		}
	}
	for _, text := range []string{"tokens of API keys and tunnel credentials", "AWS secret access keys of event destinations"} {
		if !strings.Contains(doc, text) {
			t.Errorf("the events reference does not say %q", text)
		}
	}
}
