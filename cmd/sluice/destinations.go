package main

import (
	"cmp"
	"maps"
	"net/http"
	"slices"

	"github.com/spf13/cobra"
)

func destinationsKind() resourceKind {
	return resourceKind{
		command: "destinations",
		plural:  "event destinations",
		path:    "/event_destinations",
		listKey: "event_destinations",
		columns: []string{"ID", "CREATED_AT", "TARGET", "ARN", "AUTH", "DESCRIPTION"},
		view:    viewAs[destinationView],
	}
}

// newDestinationsCommand returns `sluice destinations`, a client of
// /event_destinations.
func newDestinationsCommand() *cobra.Command {
	var f resourceFlags
	kind := destinationsKind()
	cmd := newResourceCommand(kind,
		"Create, list, change and delete event destinations through the API of a running sluice",
		`Manage the account's event destinations through the API of a running sluice
(/event_destinations): where events are delivered, a Kinesis data stream, a
Data Firehose delivery stream or a CloudWatch Logs log group, and how sluice
authenticates to AWS: by assuming a role, or with an access key.

An access key's secret is write-only: the API never returns it and these
commands never print it. Pass it as SLUICE_AWS_SECRET_ACCESS_KEY rather than
with --aws-secret-access-key, which shows in process lists and shell history.

--api-url and --api-key can be set as SLUICE_API_URL and SLUICE_API_KEY.`,
		&f)
	cmd.AddCommand(newDestinationsCreateCommand(kind, &f), newDestinationsUpdateCommand(kind, &f),
		newDestinationsStatusCommand(kind, &f), newDestinationsTestCommand(kind, &f))
	cmd.AddCommand(newDeadLettersCommand(kind, &f), newRedriveCommand(kind, &f))
	return cmd
}

func newDestinationsCreateCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	d := newDestinationFlags()
	var quiet quietFlag
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an event destination",
		Long: `Create an event destination: POST /event_destinations.

Give its target with one of --kinesis-stream-arn, --firehose-delivery-stream-arn
and --cloudwatch-log-group-arn, and how sluice authenticates with --role-arn, or
with --aws-access-key-id and the secret in SLUICE_AWS_SECRET_ACCESS_KEY. Or give
the whole body with --data (see EventDestinationCreate in docs/openapi.yaml):
the flags set their fields on it.`,
		Example: `  sluice destinations create --kinesis-stream-arn arn:aws:kinesis:us-east-1:123456789012:stream/events \
    --role-arn arn:aws:iam::123456789012:role/sluice --description "all traffic"
  SLUICE_AWS_SECRET_ACCESS_KEY=... sluice destinations create \
    --firehose-delivery-stream-arn arn:aws:firehose:us-east-1:123456789012:deliverystream/events \
    --aws-access-key-id AKIAIOSFODNN7EXAMPLE`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			body, err := d.build(cmd.Flags(), cmd.InOrStdin(), nil)
			if err != nil {
				return err
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPost, kind.path, body)
			if err != nil {
				return err
			}
			return printCreated(cmd.OutOrStdout(), kind.view, raw, f.json, quiet)
		},
	}
	d.register(cmd.Flags())
	quiet.register(cmd.Flags())
	return cmd
}

func newDestinationsUpdateCommand(kind resourceKind, f *resourceFlags) *cobra.Command {
	d := newDestinationFlags()
	cmd := &cobra.Command{
		Use:   "update ID",
		Short: "Change an event destination: only the fields whose flags are given",
		Long: `Change an event destination: PATCH /event_destinations/ID, with only the
fields whose flags are given (or that --data holds).

A target is replaced whole, so when only its ARN or only its authentication
is given, the command first reads the destination and keeps the rest of its
target. An access key sent without its secret keeps the stored secret if the
key id is unchanged. The target's type cannot change.`,
		Example: `  sluice destinations update ed_... --description "traffic of eu-west-1"
  sluice destinations update ed_... --role-arn arn:aws:iam::123456789012:role/sluice-v2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			path := kind.itemPath(args[0])
			current := func() (map[string]any, error) { return readTarget(cmd.Context(), c, path) }
			body, err := d.build(cmd.Flags(), cmd.InOrStdin(), current)
			if err != nil {
				return err
			}
			if len(body) == 0 {
				return nothingToUpdate("--description, --metadata, --format, a target ARN or its authentication")
			}
			raw, err := sendBody(cmd.Context(), c, http.MethodPatch, path, body)
			if err != nil {
				return err
			}
			return printResource(cmd.OutOrStdout(), kind.view, raw, f.json)
		},
	}
	d.register(cmd.Flags())
	return cmd
}

// destinationView is a destination as the API returns it. It has no field
// for a secret: the API never returns one, and no table could show it.
type destinationView struct {
	ID          string                           `json:"id"`
	URI         string                           `json:"uri"`
	CreatedAt   string                           `json:"created_at"`
	Description string                           `json:"description"`
	Metadata    string                           `json:"metadata"`
	Format      string                           `json:"format"`
	Target      map[string]destinationTargetView `json:"target"`
}

// destinationTargetView is any of the targets; only its own ARN is set.
type destinationTargetView struct {
	Auth struct {
		Role *struct {
			RoleARN string `json:"role_arn"`
		} `json:"role"`
		Creds *struct {
			AccessKeyID string `json:"aws_access_key_id"`
		} `json:"creds"`
	} `json:"auth"`
	StreamARN         string `json:"stream_arn"`
	DeliveryStreamARN string `json:"delivery_stream_arn"`
	LogGroupARN       string `json:"log_group_arn"`
}

// target returns the type and fields of the destination's one target.
func (d destinationView) target() (string, destinationTargetView) {
	for _, targetType := range slices.Sorted(maps.Keys(d.Target)) {
		return targetType, d.Target[targetType]
	}
	return "", destinationTargetView{}
}

func (t destinationTargetView) arn() string {
	return cmp.Or(t.StreamARN, t.DeliveryStreamARN, t.LogGroupARN)
}

// auth returns the kind of authentication, "role" or "creds", and the
// role's ARN or the access key's id.
func (t destinationTargetView) auth() (string, string) {
	switch {
	case t.Auth.Role != nil:
		return "role", t.Auth.Role.RoleARN
	case t.Auth.Creds != nil:
		return "creds", t.Auth.Creds.AccessKeyID
	}
	return "", ""
}

func (d destinationView) row() []string {
	targetType, target := d.target()
	kind, _ := target.auth()
	return []string{d.ID, d.CreatedAt, targetType, target.arn(), kind, d.Description}
}

func (d destinationView) fields() []resourceField {
	targetType, target := d.target()
	kind, who := target.auth()
	fields := []resourceField{
		{"ID", d.ID}, {"URI", d.URI}, {"CREATED_AT", d.CreatedAt},
		{"DESCRIPTION", d.Description}, {"METADATA", d.Metadata}, {"FORMAT", d.Format},
		{"TARGET", targetType}, {"ARN", target.arn()}, {"AUTH", kind},
	}
	switch kind {
	case "role":
		fields = append(fields, resourceField{"ROLE_ARN", who})
	case "creds":
		fields = append(fields, resourceField{"AWS_ACCESS_KEY_ID", who})
	}
	return fields
}
