package cloudwatchlogs

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/sinks"
)

// logGroupName is what a log group's name may hold.
var logGroupName = regexp.MustCompile(`^[a-zA-Z0-9_./#-]+$`)

// TargetType returns the CloudWatch Logs log group type of destination
// target: {"cloudwatch_logs": {"log_group_arn": ..., "auth": ...}}. Its
// sink is a sinks.SubscriptionSink (see New).
func TargetType() sinks.TargetType {
	return sinks.TargetType{
		Name:     "cloudwatch_logs",
		ARNField: "log_group_arn",
		ARN: sinks.ARNRule{
			What:           "CloudWatch Logs log group",
			Service:        "logs",
			ResourcePrefix: "log-group:",
			CheckName:      checkLogGroupName,
			Example:        "arn:aws:logs:us-east-1:123456789012:log-group:/sluice/events",
		},
		Flag:      "cloudwatch-log-group-arn",
		FlagUsage: "deliver to this CloudWatch Logs log group, such as arn:aws:logs:us-east-1:123456789012:log-group:events",
		NewSink: func(ctx context.Context, t sinks.Target) (sinks.Sink, error) {
			return sinks.SinkOf(New(ctx, Config{LogGroupARN: t.ARN, Auth: t.Auth, ExternalID: t.ExternalID, Endpoint: t.Endpoint}))
		},
		Tail: newTailReader,
	}
}

// checkLogGroupName checks "NAME" or "NAME:*", the two forms a log group
// ARN takes after "log-group:".
func checkLogGroupName(name string) string {
	name = strings.TrimSuffix(name, ":*")
	switch {
	case name == "":
		return "the log group name is missing"
	case len(name) > maxNameLength:
		return "the log group name is longer than " + strconv.Itoa(maxNameLength) + " characters"
	case !logGroupName.MatchString(name):
		return "the log group name " + strconv.Quote(name) + " may hold only letters, digits, '_', '.', '/', '#' and '-' (and end with :* at most)"
	}
	return ""
}
