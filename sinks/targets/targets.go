package targets

import (
	"regexp"
	"strconv"
	"strings"
)

// Kind is one type of destination target, as data.
type Kind struct {
	// Name is the key of the target in a destination's JSON, "kinesis",
	// as in {"target": {"kinesis": {...}}}.
	Name string
	// ARNField is the member of the target that holds its ARN, such as
	// "stream_arn".
	ARNField string
	// ARN is what the target's ARN looks like.
	ARN ARNRule
	// Flag is the CLI flag that chooses the type and gives the target's
	// ARN, such as "kinesis-stream-arn", and FlagUsage its help.
	Flag, FlagUsage string
}

// ARNRule is what the ARN of one kind of AWS resource looks like, for
// checking an ARN a user gives and saying what is wrong with it.
type ARNRule struct {
	// What names the resource in messages: "Kinesis data stream".
	What string
	// Service is the ARN's service namespace: "kinesis".
	Service string
	// ResourcePrefix starts the resource part, before the name: "stream/".
	ResourcePrefix string
	// CheckName checks what follows ResourcePrefix and returns what is
	// wrong with it, or "".
	CheckName func(name string) string
	// Example is a valid ARN of the kind, for messages.
	Example string
}

// Lengths of the names of targets, as AWS limits them.
const (
	// MaxStreamName is the most characters of a Kinesis data stream's
	// name.
	MaxStreamName = 128
	// MaxDeliveryStreamName is the most characters of a Firehose
	// delivery stream's name.
	MaxDeliveryStreamName = 64
	// MaxLogGroupName is the most characters of the name of a CloudWatch
	// Logs log group, and of a log stream.
	MaxLogGroupName = 512
)

var (
	// streamName is what a Kinesis or Firehose stream's name may hold.
	streamName = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)
	// logGroupName is what a log group's name may hold.
	logGroupName = regexp.MustCompile(`^[a-zA-Z0-9_./#-]+$`)
)

// Kinesis is a Kinesis data stream: {"kinesis": {"stream_arn": ...,
// "auth": ...}}.
var Kinesis = Kind{
	Name:     "kinesis",
	ARNField: "stream_arn",
	ARN: ARNRule{
		What:           "Kinesis data stream",
		Service:        "kinesis",
		ResourcePrefix: "stream/",
		CheckName:      NameRule(MaxStreamName, streamName, "letters, digits, '_', '.' and '-'"),
		Example:        "arn:aws:kinesis:us-east-1:123456789012:stream/sluice-events",
	},
	Flag:      "kinesis-stream-arn",
	FlagUsage: "deliver to this Kinesis data stream, such as arn:aws:kinesis:us-east-1:123456789012:stream/events",
}

// Firehose is a Data Firehose delivery stream: {"firehose":
// {"delivery_stream_arn": ..., "auth": ...}}.
var Firehose = Kind{
	Name:     "firehose",
	ARNField: "delivery_stream_arn",
	ARN: ARNRule{
		What:           "Firehose delivery stream",
		Service:        "firehose",
		ResourcePrefix: "deliverystream/",
		CheckName:      checkDeliveryStreamName,
		Example:        "arn:aws:firehose:us-east-1:123456789012:deliverystream/sluice-events",
	},
	Flag:      "firehose-delivery-stream-arn",
	FlagUsage: "deliver to this Data Firehose delivery stream, such as arn:aws:firehose:us-east-1:123456789012:deliverystream/events",
}

// CloudWatchLogs is a CloudWatch Logs log group: {"cloudwatch_logs":
// {"log_group_arn": ..., "auth": ...}}.
var CloudWatchLogs = Kind{
	Name:     "cloudwatch_logs",
	ARNField: "log_group_arn",
	ARN: ARNRule{
		What:           "CloudWatch Logs log group",
		Service:        "logs",
		ResourcePrefix: "log-group:",
		CheckName:      checkLogGroupName,
		Example:        "arn:aws:logs:us-east-1:123456789012:log-group:/sluice/events",
	},
	Flag:      "cloudwatch-log-group-arn",
	FlagUsage: "deliver to this CloudWatch Logs log group, such as arn:aws:logs:us-east-1:123456789012:log-group:events",
}

// All returns the types of destination target, in the order the CLI lists
// their flags.
func All() []Kind { return []Kind{Kinesis, Firehose, CloudWatchLogs} }

// Named returns the type whose Name is name, and whether there is one.
func Named(name string) (Kind, bool) {
	for _, k := range All() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// NameRule returns an ARNRule.CheckName of a resource name of at most
// maxLen characters matching pattern, whose characters allowed describes.
func NameRule(maxLen int, pattern *regexp.Regexp, allowed string) func(string) string {
	return func(name string) string {
		switch {
		case name == "":
			return "the name is missing"
		case len(name) > maxLen:
			return "the name is longer than " + strconv.Itoa(maxLen) + " characters"
		case !pattern.MatchString(name):
			return "the name " + strconv.Quote(name) + " may hold only " + allowed
		}
		return ""
	}
}

// checkDeliveryStreamName returns what is wrong with a Firehose delivery
// stream's name, or "".
func checkDeliveryStreamName(name string) string {
	return NameRule(MaxDeliveryStreamName, streamName, "letters, digits, '_', '.' and '-'")(name)
}

// checkLogGroupName checks "NAME" or "NAME:*", the two forms a log group
// ARN takes after "log-group:".
func checkLogGroupName(name string) string {
	name = strings.TrimSuffix(name, ":*")
	switch {
	case name == "":
		return "the log group name is missing"
	case len(name) > MaxLogGroupName:
		return "the log group name is longer than " + strconv.Itoa(MaxLogGroupName) + " characters"
	case !logGroupName.MatchString(name):
		return "the log group name " + strconv.Quote(name) + " may hold only letters, digits, '_', '.', '/', '#' and '-' (and end with :* at most)"
	}
	return ""
}
