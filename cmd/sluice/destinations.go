package main

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/resource"
)

// destinationsFamily declares `sluice destinations`, a client of
// /event_destinations. Its target flags are a hook
// (destinationFlags).
func destinationsFamily() family[apiwire.Destination, apiwire.DestinationInput] {
	return family[apiwire.Destination, apiwire.DestinationInput]{
		spec: resource.EventDestinations(),
		kind: resourceKind{
			command: "destinations",
			plural:  "event destinations",
			columns: []string{"ID", "CREATED_AT", "TARGET", "ARN", "AUTH", "DESCRIPTION"},
		},
		short: "Create, list, change and delete event destinations through the API of a running sluice",
		long: `Manage the account's event destinations through the API of a running sluice
(/event_destinations): where events are delivered, a Kinesis data stream, a
Data Firehose delivery stream or a CloudWatch Logs log group, and how sluice
authenticates to AWS: by assuming a role, or with an access key.

An access key's secret is write-only: the API never returns it and these
commands never print it. Pass it as SLUICE_AWS_SECRET_ACCESS_KEY rather than
with --aws-secret-access-key, which shows in process lists and shell history.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		row:    destinationRow,
		fields: destinationFields,
		body:   func() bodyHook[apiwire.Destination] { return newDestinationFlags() },
		create: verbHelp{
			short: "Create an event destination",
			long: `Create an event destination: POST /event_destinations.

Give its target with one of --kinesis-stream-arn, --firehose-delivery-stream-arn
and --cloudwatch-log-group-arn, and how sluice authenticates with --role-arn, or
with --aws-access-key-id and the secret in SLUICE_AWS_SECRET_ACCESS_KEY. Or give
the whole body with --data (see EventDestinationCreate in docs/openapi.yaml):
the flags set their fields on it.`,
			example: `  sluice destinations create --kinesis-stream-arn arn:aws:kinesis:us-east-1:123456789012:stream/events \
    --role-arn arn:aws:iam::123456789012:role/sluice --description "all traffic"
  SLUICE_AWS_SECRET_ACCESS_KEY=... sluice destinations create \
    --firehose-delivery-stream-arn arn:aws:firehose:us-east-1:123456789012:deliverystream/events \
    --aws-access-key-id AKIAIOSFODNN7EXAMPLE`,
		},
		update: verbHelp{
			short: "Change an event destination: only the fields whose flags are given",
			long: `Change an event destination: PATCH /event_destinations/ID, with only the
fields whose flags are given (or that --data holds).

A target is replaced whole, so when only its ARN or only its authentication
is given, the command first reads the destination and keeps the rest of its
target. An access key sent without its secret keeps the stored secret if the
key id is unchanged. The target's type cannot change.`,
			example: `  sluice destinations update ed_... --description "traffic of eu-west-1"
  sluice destinations update ed_... --role-arn arn:aws:iam::123456789012:role/sluice-v2`,
		},
		updateFlags: "--description, --metadata, --format, a target ARN or its authentication",
		commands: func(f *resourceFlags) []*cobra.Command {
			return []*cobra.Command{
				newDestinationsStatusCommand(f), newDestinationsTestCommand(f),
				newDeadLettersCommand(f), newRedriveCommand(f), newDeleteDeadLettersCommand(f),
			}
		},
	}
}

// newDestinationsCommand returns `sluice destinations`.
func newDestinationsCommand() *cobra.Command { return newFamilyCommand(destinationsFamily()) }

// destinationAuth returns the kind of a destination's authentication,
// "role" or "creds", and the role's ARN or the access key's id. A
// destination has no field for a secret: the API never returns one, and no
// table could show it.
func destinationAuth(t apiwire.Target) (string, string) {
	switch {
	case t.Auth.Role != nil:
		return "role", t.Auth.Role.RoleARN
	case t.Auth.Creds != nil:
		return "creds", t.Auth.Creds.AccessKeyID
	}
	return "", ""
}

func destinationRow(d apiwire.Destination) []string {
	kind, _ := destinationAuth(d.Target)
	return []string{d.ID, d.CreatedAt, d.Target.Type, d.Target.ARN, kind, d.Description}
}

func destinationFields(d apiwire.Destination) []resourceField {
	kind, who := destinationAuth(d.Target)
	fields := []resourceField{
		{"ID", d.ID}, {"URI", d.URI}, {"CREATED_AT", d.CreatedAt},
		{"DESCRIPTION", d.Description}, {"METADATA", d.Metadata}, {"FORMAT", d.Format},
		{"TARGET", d.Target.Type}, {"ARN", d.Target.ARN}, {"AUTH", kind},
	}
	switch kind {
	case "role":
		fields = append(fields, resourceField{"ROLE_ARN", who})
	case "creds":
		fields = append(fields, resourceField{"AWS_ACCESS_KEY_ID", who})
	}
	return fields
}
