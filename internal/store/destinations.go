package store

import (
	"log/slog"
	"strings"
	"time"
)

// FormatJSON is the only format of a destination: one envelope per record,
// as JSON.
const FormatJSON = "json"

// Target types, as the names of the fields of Target in JSON.
const (
	TargetFirehose       = "firehose"
	TargetKinesis        = "kinesis"
	TargetCloudWatchLogs = "cloudwatch_logs"
)

// Destination is an event destination of an account (specification section
// 2.9): where the events of the subscriptions that name it are delivered.
//
// A destination with static credentials carries their secret access key:
// the store keeps it, because delivery signs its requests with it, and
// GetDestination, ListDestinations and WatchConfig return it. Anything shown
// to a user or written to an audit event is Redacted first; LogValue never
// shows it.
type Destination struct {
	// ID is "ed_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the destination.
	AccountID string `json:"account_id"`
	// CreatedAt is when the destination was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// Format is how events are written: always FormatJSON once stored. It
	// is accepted in any case, and "" means FormatJSON.
	Format string `json:"format"`
	// Target is where events go: exactly one of its fields is set.
	Target Target `json:"target"`
}

// Target is the AWS resource a destination delivers to. Exactly one field is
// set; the type of a destination's target never changes.
type Target struct {
	Firehose       *FirehoseTarget       `json:"firehose,omitempty"`
	Kinesis        *KinesisTarget        `json:"kinesis,omitempty"`
	CloudWatchLogs *CloudWatchLogsTarget `json:"cloudwatch_logs,omitempty"`
}

// FirehoseTarget is an Amazon Data Firehose delivery stream.
type FirehoseTarget struct {
	// Auth says how sluice authenticates to AWS.
	Auth AWSAuth `json:"auth"`
	// DeliveryStreamARN is arn:PARTITION:firehose:REGION:ACCOUNT:deliverystream/NAME.
	DeliveryStreamARN string `json:"delivery_stream_arn"`
}

// KinesisTarget is an Amazon Kinesis data stream.
type KinesisTarget struct {
	// Auth says how sluice authenticates to AWS.
	Auth AWSAuth `json:"auth"`
	// StreamARN is arn:PARTITION:kinesis:REGION:ACCOUNT:stream/NAME.
	StreamARN string `json:"stream_arn"`
}

// CloudWatchLogsTarget is an Amazon CloudWatch Logs log group.
type CloudWatchLogsTarget struct {
	// Auth says how sluice authenticates to AWS.
	Auth AWSAuth `json:"auth"`
	// LogGroupARN is arn:PARTITION:logs:REGION:ACCOUNT:log-group:NAME,
	// optionally followed by ":*".
	LogGroupARN string `json:"log_group_arn"`
}

// AWSAuth says how sluice authenticates to AWS: exactly one field is set.
type AWSAuth struct {
	Role  *AWSRole  `json:"role,omitempty"`
	Creds *AWSCreds `json:"creds,omitempty"`
}

// AWSRole is an IAM role sluice assumes to deliver, with the account id as
// external id.
type AWSRole struct {
	// RoleARN is arn:PARTITION:iam::ACCOUNT:role/NAME, or role/PATH/NAME.
	RoleARN string `json:"role_arn"`
}

// AWSCreds is an access key sluice signs its requests with.
type AWSCreds struct {
	// AccessKeyID is the access key id, such as AKIAIOSFODNN7EXAMPLE.
	AccessKeyID string `json:"aws_access_key_id"`
	// SecretAccessKey is the secret of the access key. It is write-only:
	// Redacted empties it, and it is then left out of JSON; String and
	// LogValue never show it.
	SecretAccessKey string `json:"aws_secret_access_key,omitempty"`
}

// Type returns the type of the target set, TargetFirehose, TargetKinesis or
// TargetCloudWatchLogs, or "" if none or several are set.
func (t Target) Type() string {
	set := t.types()
	if len(set) != 1 {
		return ""
	}
	return set[0]
}

// types returns the types of the targets set.
func (t Target) types() []string {
	var set []string
	if t.Firehose != nil {
		set = append(set, TargetFirehose)
	}
	if t.Kinesis != nil {
		set = append(set, TargetKinesis)
	}
	if t.CloudWatchLogs != nil {
		set = append(set, TargetCloudWatchLogs)
	}
	return set
}

// ARN returns the ARN of the target set, or "" if none is.
func (t Target) ARN() string {
	switch {
	case t.Firehose != nil:
		return t.Firehose.DeliveryStreamARN
	case t.Kinesis != nil:
		return t.Kinesis.StreamARN
	case t.CloudWatchLogs != nil:
		return t.CloudWatchLogs.LogGroupARN
	}
	return ""
}

// Auth returns the authentication of the target set, or the zero AWSAuth if
// none is.
func (t Target) Auth() AWSAuth {
	switch {
	case t.Firehose != nil:
		return t.Firehose.Auth
	case t.Kinesis != nil:
		return t.Kinesis.Auth
	case t.CloudWatchLogs != nil:
		return t.CloudWatchLogs.Auth
	}
	return AWSAuth{}
}

// Redacted returns a copy of the destination without the secret access key,
// to show to a user or to put in an audit event. It does not change d.
func (d Destination) Redacted() Destination {
	d.Target = d.Target.clone()
	for _, auth := range []*AWSAuth{d.Target.auth(TargetFirehose), d.Target.auth(TargetKinesis), d.Target.auth(TargetCloudWatchLogs)} {
		if auth != nil && auth.Creds != nil {
			auth.Creds.SecretAccessKey = ""
		}
	}
	return d
}

// auth returns the authentication of the target of the type, or nil if it
// is not set.
func (t Target) auth(typ string) *AWSAuth {
	switch {
	case typ == TargetFirehose && t.Firehose != nil:
		return &t.Firehose.Auth
	case typ == TargetKinesis && t.Kinesis != nil:
		return &t.Kinesis.Auth
	case typ == TargetCloudWatchLogs && t.CloudWatchLogs != nil:
		return &t.CloudWatchLogs.Auth
	}
	return nil
}

// clone returns a deep copy of the target.
func (t Target) clone() Target {
	if t.Firehose != nil {
		f := *t.Firehose
		f.Auth = f.Auth.clone()
		t.Firehose = &f
	}
	if t.Kinesis != nil {
		k := *t.Kinesis
		k.Auth = k.Auth.clone()
		t.Kinesis = &k
	}
	if t.CloudWatchLogs != nil {
		c := *t.CloudWatchLogs
		c.Auth = c.Auth.clone()
		t.CloudWatchLogs = &c
	}
	return t
}

func (a AWSAuth) clone() AWSAuth {
	if a.Role != nil {
		role := *a.Role
		a.Role = &role
	}
	if a.Creds != nil {
		creds := *a.Creds
		a.Creds = &creds
	}
	return a
}

// LogValue returns the destination as slog shows it: its id, account,
// description, format and target, without the secret access key (and
// without Metadata, free text of up to 4096 bytes).
func (d Destination) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("id", d.ID),
		slog.String("account_id", d.AccountID),
		slog.String("description", d.Description),
		slog.String("format", d.Format),
		slog.Any("target", d.Target),
		slog.Time("created_at", d.CreatedAt),
	)
}

// LogValue returns the target's type, ARN and authentication, without the
// secret access key.
func (t Target) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("type", strings.Join(t.types(), ",")),
		slog.String("arn", t.ARN()),
		slog.Any("auth", t.Auth()),
	)
}

// LogValue returns the target without the secret access key.
func (t FirehoseTarget) LogValue() slog.Value { return Target{Firehose: &t}.LogValue() }

// LogValue returns the target without the secret access key.
func (t KinesisTarget) LogValue() slog.Value { return Target{Kinesis: &t}.LogValue() }

// LogValue returns the target without the secret access key.
func (t CloudWatchLogsTarget) LogValue() slog.Value { return Target{CloudWatchLogs: &t}.LogValue() }

// LogValue returns the role ARN or the access key id, never the secret
// access key.
func (a AWSAuth) LogValue() slog.Value {
	var attrs []slog.Attr
	if a.Role != nil {
		attrs = append(attrs, slog.String("role_arn", a.Role.RoleARN))
	}
	if a.Creds != nil {
		attrs = append(attrs, slog.Any("creds", *a.Creds))
	}
	return slog.GroupValue(attrs...)
}

// LogValue returns the access key id, never the secret access key.
func (c AWSCreds) LogValue() slog.Value {
	return slog.GroupValue(slog.String("aws_access_key_id", c.AccessKeyID))
}

// String returns the access key id, never the secret access key, so that
// printing the credentials with fmt cannot show it either.
func (c AWSCreds) String() string {
	return "{aws_access_key_id: " + c.AccessKeyID + "}"
}

// GoString is String, for %#v.
func (c AWSCreds) GoString() string { return c.String() }
