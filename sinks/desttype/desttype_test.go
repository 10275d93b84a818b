package desttype_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/sinks"
	"github.com/sluicehq/sluice/sinks/desttype"
	"github.com/sluicehq/sluice/sinks/targets"
)

// TestTypesAreWhole checks that each type declares all it must, under
// names no other type uses, and that its example ARN is one of its own.
func TestTypesAreWhole(t *testing.T) {
	seen := map[string]string{}
	for _, typ := range desttype.All() {
		t.Run(typ.Name, func(t *testing.T) {
			if typ.Name == "" || typ.ARNField == "" || typ.Flag == "" || typ.FlagUsage == "" || typ.NewSink == nil || typ.Tail == nil ||
				typ.ARN.What == "" || typ.ARN.Service == "" || typ.ARN.ResourcePrefix == "" || typ.ARN.CheckName == nil {
				t.Fatalf("type %+v leaves something out", typ)
			}
			for _, name := range []string{"name " + typ.Name, "flag " + typ.Flag, "service " + typ.ARN.Service} {
				if other, ok := seen[name]; ok {
					t.Errorf("%s is also %s's", name, other)
				}
				seen[name] = typ.Name
			}
			got, ok := desttype.Named(typ.Name)
			if !ok || got.Flag != typ.Flag {
				t.Fatalf("Named(%q) = %+v, %v", typ.Name, got, ok)
			}
			resource := strings.SplitN(typ.ARN.Example, ":", 6)[5]
			name, ok := strings.CutPrefix(resource, typ.ARN.ResourcePrefix)
			if !ok || typ.ARN.CheckName(name) != "" {
				t.Errorf("example %s does not pass its own rule: %q", typ.ARN.Example, typ.ARN.CheckName(name))
			}
			if typ.ARN.CheckName("") == "" {
				t.Errorf("an empty name passes the rule")
			}
		})
	}
	if _, ok := desttype.Named("s3"); ok {
		t.Fatal(`Named("s3") found a type`)
	}
}

// TestNewSink checks that each type's NewSink builds a sink of its example
// ARN, and refuses an ARN of another service without a nil sink in a
// non-nil interface.
func TestNewSink(t *testing.T) {
	for _, typ := range desttype.All() {
		t.Run(typ.Name, func(t *testing.T) {
			sink, err := typ.NewSink(context.Background(), sinks.Target{
				ARN:        typ.ARN.Example,
				Auth:       sinks.AWSAuth{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"},
				ExternalID: "ac_1",
				Endpoint:   "http://127.0.0.1:1",
			})
			if err != nil || sink == nil {
				t.Fatalf("NewSink(%s) = %v, %v", typ.ARN.Example, sink, err)
			}
			sink, err = typ.NewSink(context.Background(), sinks.Target{ARN: "arn:aws:sqs:us-east-1:123456789012:queue"})
			if err == nil || sink != nil {
				t.Fatalf("NewSink(a queue's ARN) = %v, %v; want no sink and an error", sink, err)
			}
		})
	}
}

// TestTypesAreTargets checks that desttype lists each type of package
// targets, in its order, so that every type the store accepts has a sink.
func TestTypesAreTargets(t *testing.T) {
	all := desttype.All()
	kinds := targets.All()
	if len(all) != len(kinds) {
		t.Fatalf("desttype has %d types, targets %d", len(all), len(kinds))
	}
	for i, typ := range all {
		if typ.Name != kinds[i].Name || typ.Flag != kinds[i].Flag {
			t.Errorf("type %d: desttype's %q, targets' %q", i, typ.Name, kinds[i].Name)
		}
	}
}
