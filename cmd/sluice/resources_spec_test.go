package main

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/internal/resource"
)

// TestSpecFlags checks that a family's flags come from its declaration:
// named after the JSON names, with their help and limits, left out of
// create or update when that body does not accept the field, and none for
// a field without a usage.
func TestSpecFlags(t *testing.T) {
	spec := resource.Spec{Fields: []resource.Field{
		{Name: "display_name", Kind: resource.String, Max: 64, Unit: resource.Characters, Create: true, Update: true, Usage: "a name, at most {limit}"},
		{Name: "region", Kind: resource.String, Create: true, Usage: "where it runs, fixed at create"},
		{Name: "paused", Kind: resource.Bool, Update: true, Usage: "whether it is paused"},
		{Name: "tags", Kind: resource.List, Create: true, Update: true, Usage: "a tag (repeatable)"},
		{Name: "target", Kind: resource.Object, Create: true, Update: true},
	}}
	for _, tt := range []struct {
		update bool
		want   map[string]string // flag: usage
	}{
		{false, map[string]string{"display-name": "a name, at most 64 characters", "region": "where it runs, fixed at create", "tags": "a tag (repeatable)"}},
		{true, map[string]string{"display-name": "a name, at most 64 characters", "paused": "whether it is paused", "tags": "a tag (repeatable)"}},
	} {
		fl := pflag.NewFlagSet("test", pflag.ContinueOnError)
		v := newFieldFlags(specFlags(spec), tt.update)
		v.register(fl)
		got := map[string]string{}
		fl.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.Usage })
		if len(got) != len(tt.want) {
			t.Errorf("update %v: flags %v, want %v", tt.update, got, tt.want)
		}
		for name, usage := range tt.want {
			if got[name] != usage {
				t.Errorf("update %v: --%s's usage %q, want %q", tt.update, name, got[name], usage)
			}
		}
		args := []string{"--display-name", "n", "--tags", "a", "--tags", "b"}
		if tt.update {
			args = append(args, "--paused")
		} else {
			args = append(args, "--region", "eu")
		}
		if err := fl.Parse(args); err != nil {
			t.Fatal(err)
		}
		body := map[string]any{}
		v.apply(fl, body)
		if body["display_name"] != "n" || len(body["tags"].([]string)) != 2 ||
			tt.update && body["paused"] != true || !tt.update && body["region"] != "eu" {
			t.Errorf("update %v: body %v", tt.update, body)
		}
	}
}
