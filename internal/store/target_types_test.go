package store

import (
	"testing"

	"github.com/sluicehq/sluice/sinks/targets"
)

// The rules of the ARNs of the targets, as TestCheckARN checks them.
var (
	firehoseARN = typeARNRule(TargetFirehose)
	kinesisARN  = typeARNRule(TargetKinesis)
	logGroupARN = typeARNRule(TargetCloudWatchLogs)
)

// typeARNRule returns the rule of the ARN of the type of target named name.
func typeARNRule(name string) arnRule {
	typ, ok := targets.Named(name)
	if !ok {
		panic("no target type " + name)
	}
	return targetARNRule(typ.ARN)
}

// TestTargetFieldsAreTypes checks that each field of Target is a type of
// package targets, and each type of package targets a field of Target,
// so that a target of any type is checked by its type's rules.
func TestTargetFieldsAreTypes(t *testing.T) {
	fields := map[string]bool{}
	for _, f := range (&Target{}).fields() {
		if _, ok := targets.Named(f.typ); !ok {
			t.Errorf("Target's field %q is no type of package targets", f.typ)
		}
		fields[f.typ] = true
	}
	for _, typ := range targets.All() {
		if !fields[typ.Name] {
			t.Errorf("type %q of package targets is no field of Target", typ.Name)
		}
	}
}

// TestTargetMembers checks that a target's ARN and authentication are found
// for each type, and that WithAuth, Redacted and clone change copies only.
func TestTargetMembers(t *testing.T) {
	secret := AWSAuth{Creds: &AWSCreds{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "s3cret"}}
	targets := map[string]Target{
		TargetFirehose:       {Firehose: &FirehoseTarget{Auth: secret, DeliveryStreamARN: "arn:f"}},
		TargetKinesis:        {Kinesis: &KinesisTarget{Auth: secret, StreamARN: "arn:k"}},
		TargetCloudWatchLogs: {CloudWatchLogs: &CloudWatchLogsTarget{Auth: secret, LogGroupARN: "arn:c"}},
	}
	for typ, target := range targets {
		t.Run(typ, func(t *testing.T) {
			if target.Type() != typ || target.ARN() != "arn:"+typ[:1] || target.Auth().Creds.SecretAccessKey != "s3cret" {
				t.Fatalf("Type, ARN, Auth = %q, %q, %v", target.Type(), target.ARN(), target.Auth())
			}
			role := target.WithAuth(AWSAuth{Role: &AWSRole{RoleARN: "arn:r"}})
			if role.Auth().Role == nil || role.Auth().Creds != nil || role.ARN() != target.ARN() {
				t.Fatalf("WithAuth(role) = %v", role)
			}
			redacted := Destination{Target: target}.Redacted().Target
			if redacted.Auth().Creds.SecretAccessKey != "" || redacted.Auth().Creds.AccessKeyID != "AKIDEXAMPLE" {
				t.Fatalf("Redacted's creds = %#v", redacted.Auth().Creds)
			}
			if target.Auth().Role != nil || target.Auth().Creds.SecretAccessKey != "s3cret" {
				t.Fatalf("WithAuth or Redacted changed the target: %#v", target.Auth())
			}
		})
	}
	if none := (Target{}); none.Type() != "" || none.ARN() != "" || none.Auth() != (AWSAuth{}) {
		t.Fatalf("the zero Target has type %q, ARN %q, auth %v", none.Type(), none.ARN(), none.Auth())
	}
	two := Target{Kinesis: targets[TargetKinesis].Kinesis, Firehose: targets[TargetFirehose].Firehose}
	if two.Type() != "" || two.check() == nil {
		t.Fatalf("two targets have type %q and check %v", two.Type(), two.check())
	}
}
