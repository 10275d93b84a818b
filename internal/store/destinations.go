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
	for _, m := range t.members() {
		set = append(set, m.typ)
	}
	return set
}

// ARN returns the ARN of the target set, or "" if none is.
func (t Target) ARN() string {
	if set := t.members(); len(set) > 0 {
		return *set[0].arn
	}
	return ""
}

// Auth returns the authentication of the target set, or the zero AWSAuth if
// none is.
func (t Target) Auth() AWSAuth {
	if set := t.members(); len(set) > 0 {
		return *set[0].auth
	}
	return AWSAuth{}
}

// WithAuth returns a copy of t whose target set has the authentication
// auth. It does not change t.
func (t Target) WithAuth(auth AWSAuth) Target {
	t = t.clone()
	if set := t.members(); len(set) > 0 {
		*set[0].auth = auth.clone()
	}
	return t
}

// Redacted returns a copy of the destination without the secret access key,
// to show to a user or to put in an audit event. It does not change d.
func (d Destination) Redacted() Destination {
	d.Target = d.Target.clone()
	for _, m := range d.Target.members() {
		if m.auth.Creds != nil {
			m.auth.Creds.SecretAccessKey = ""
		}
	}
	return d
}

// targetField is a field of Target: the target of one type.
type targetField struct {
	// typ is the name of the type, the field's JSON name.
	typ string
	// target returns the ARN and authentication of the field's target,
	// pointers into it, or nils if the field is not set.
	target func() (*string, *AWSAuth)
	// clone makes the field point to a copy of its target, if set.
	clone func()
}

// fields returns the fields of t, one per type of target, in their order.
// It is the one place that names them: what a type's target means (its
// ARN's rules) is its type's, in package sinks/targets.
func (t *Target) fields() []targetField {
	return []targetField{
		fieldOf(TargetFirehose, &t.Firehose, func(f *FirehoseTarget) *string { return &f.DeliveryStreamARN }, func(f *FirehoseTarget) *AWSAuth { return &f.Auth }),
		fieldOf(TargetKinesis, &t.Kinesis, func(k *KinesisTarget) *string { return &k.StreamARN }, func(k *KinesisTarget) *AWSAuth { return &k.Auth }),
		fieldOf(TargetCloudWatchLogs, &t.CloudWatchLogs, func(c *CloudWatchLogsTarget) *string { return &c.LogGroupARN }, func(c *CloudWatchLogsTarget) *AWSAuth { return &c.Auth }),
	}
}

// fieldOf returns the targetField of the field at p, of type typ, whose
// target has its ARN at arn and its authentication at auth.
func fieldOf[T any](typ string, p **T, arn func(*T) *string, auth func(*T) *AWSAuth) targetField {
	return targetField{
		typ: typ,
		target: func() (*string, *AWSAuth) {
			if *p == nil {
				return nil, nil
			}
			return arn(*p), auth(*p)
		},
		clone: func() {
			if *p != nil {
				c := **p
				*p = &c
			}
		},
	}
}

// member is a target set in a Target: the name of its type, and pointers to
// its ARN and authentication.
type member struct {
	typ  string
	arn  *string
	auth *AWSAuth
}

// members returns the targets set in t, in the order of its fields. Their
// pointers point into t's targets, which t shares with its copies: clone t
// before changing them.
func (t *Target) members() []member {
	var set []member
	for _, f := range t.fields() {
		if arn, auth := f.target(); arn != nil {
			set = append(set, member{typ: f.typ, arn: arn, auth: auth})
		}
	}
	return set
}

// clone returns a deep copy of the target.
func (t Target) clone() Target {
	for _, f := range t.fields() {
		f.clone()
	}
	for _, m := range t.members() {
		*m.auth = m.auth.clone()
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
