package resource_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/resource"
)

func TestCheckLabels(t *testing.T) {
	many := map[string]string{}
	for _, c := range "abcdefghijk" {
		many[string(c)] = "v"
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		label  string // the label the error names; "" with want "" for none
		want   string // in the message; "" for no error
	}{
		{"one", map[string]string{"env": "prod"}, "", ""},
		{"every character", map[string]string{"0a-b_c.d": "A-z~!#$%&*+/:;<=>?@[]^`{|}", strings.Repeat("n", 64): strings.Repeat("v", 255)}, "", ""},
		{"ten", map[string]string{"a": "1", "b": "1", "c": "1", "d": "1", "e": "1", "f": "1", "g": "1", "h": "1", "i": "1", "j": "1"}, "", ""},
		{"none", nil, "", "there are no labels: give 1 to 10"},
		{"eleven", many, "", "there are 11 labels, more than 10"},
		{"upper case name", map[string]string{"Env": "prod"}, "Env", `the label name "Env" is not valid: a label name is 1 to 64 bytes of lowercase letters`},
		{"empty name", map[string]string{"": "prod"}, "", `the label name "" is not valid`},
		{"name starting with a dash", map[string]string{"-env": "prod"}, "-env", "starting with a letter or a digit"},
		{"name with a space", map[string]string{"my env": "prod"}, "my env", "is not valid"},
		{"long name", map[string]string{strings.Repeat("n", 65): "prod"}, strings.Repeat("n", 65), "1 to 64 bytes"},
		{"empty value", map[string]string{"env": ""}, "env", `the value "" of label env is not valid: a label value is 1 to 255 bytes of printable ASCII without spaces`},
		{"value with a space", map[string]string{"env": "pro d"}, "env", "without spaces"},
		{"value with a tab", map[string]string{"env": "pro\td"}, "env", "without spaces"},
		{"value not ASCII", map[string]string{"env": "prodé"}, "env", "printable ASCII"},
		{"long value", map[string]string{"env": strings.Repeat("v", 256)}, "env", "1 to 255 bytes"},
		// Sorted: b comes before c, whatever the map's order.
		{"first by name", map[string]string{"c": "bad value", "b": "bad value", "a": "ok"}, "b", "of label b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := resource.CheckLabels(c.labels)
			if c.want == "" {
				if err != nil {
					t.Fatalf("CheckLabels: %v, want nil", err)
				}
				return
			}
			var le *resource.LabelsError
			if !errors.As(err, &le) || !errors.Is(err, resource.ErrInvalidLabels) {
				t.Fatalf("CheckLabels: %v, want a *LabelsError matching ErrInvalidLabels", err)
			}
			if le.Label != c.label || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CheckLabels: label %q, %q; want label %q and a message with %q", le.Label, err, c.label, c.want)
			}
		})
	}
}

// TestCheckLabelsIsDeterministic: a map of many bad labels, checked many
// times (Go orders a map's keys at random), always names the same one.
func TestCheckLabelsIsDeterministic(t *testing.T) {
	labels := map[string]string{"x": "", "m": "", "b": "", "q": "", "e": ""}
	for range 50 {
		var le *resource.LabelsError
		if err := resource.CheckLabels(labels); !errors.As(err, &le) || le.Label != "b" {
			t.Fatalf("CheckLabels: %v, want the label b named", err)
		}
	}
}
