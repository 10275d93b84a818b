package store

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/arn"

	"github.com/sluicehq/sluice/sinks/targets"
)

// arnRule is what an ARN of one kind of AWS resource looks like.
type arnRule struct {
	// what names the resource in messages.
	what string
	// service is the ARN's service namespace.
	service string
	// global marks an IAM ARN, which has no region.
	global bool
	// resourcePrefix starts the resource part, before the name.
	resourcePrefix string
	// checkName checks what follows resourcePrefix and returns what is
	// wrong with it, or "".
	checkName func(name string) string
	// example is a valid ARN of the kind, for messages.
	example string
}

// roleARN is the ARN of the role a destination's auth.role names. The ARNs
// of the targets are their types' (targetARNRule).
var roleARN = arnRule{
	what:           "IAM role",
	service:        "iam",
	global:         true,
	resourcePrefix: "role/",
	checkName:      checkRoleName,
	example:        "arn:aws:iam::123456789012:role/sluice-delivery",
}

// targetARNRule returns the rule of the ARN of a type of target.
func targetARNRule(rule targets.ARNRule) arnRule {
	return arnRule{
		what:           rule.What,
		service:        rule.Service,
		resourcePrefix: rule.ResourcePrefix,
		checkName:      rule.CheckName,
		example:        rule.Example,
	}
}

var (
	roleName     = regexp.MustCompile(`^[a-zA-Z0-9_+=,.@-]+$`)
	rolePath     = regexp.MustCompile(`^[\x21-\x2e\x30-\x7e]*$`) // printable ASCII but '/'
	region       = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	awsAccountID = regexp.MustCompile(`^[0-9]{12}$`)
)

// Lengths of the names in ARNs, as AWS limits them.
const (
	maxRoleName = 64
	maxRolePath = 512
)

// regionPrefixes says how the regions of each partition sluice delivers to
// begin; "" means any region that is not in another partition.
var regionPrefixes = map[string]string{
	"aws":        "",
	"aws-cn":     "cn-",
	"aws-us-gov": "us-gov-",
}

// checkARN checks that value is an ARN of the kind rule describes and
// returns it parsed, or a *ValidationError of field.
func checkARN(field, value string, rule arnRule) (arn.ARN, error) {
	if value == "" {
		return arn.ARN{}, invalid(field, "is required: give the ARN of the %s, such as %s", rule.what, rule.example)
	}
	parsed, err := arn.Parse(value)
	if err != nil {
		return arn.ARN{}, invalid(field, "%q is not an ARN (%v): give the ARN of the %s, such as %s", value, err, rule.what, rule.example)
	}
	if msg := checkARNParts(parsed, rule); msg != "" {
		return arn.ARN{}, invalid(field, "%q is not the ARN of a %s: %s; it should look like %s", value, rule.what, msg, rule.example)
	}
	return parsed, nil
}

// checkARNParts returns what is wrong with a parsed ARN, or "".
func checkARNParts(a arn.ARN, rule arnRule) string {
	prefix, known := regionPrefixes[a.Partition]
	switch {
	case !known:
		return "the partition " + strconv.Quote(a.Partition) + " is not one sluice delivers to (aws, aws-cn, aws-us-gov)"
	case a.Service != rule.service:
		return "the service is " + strconv.Quote(a.Service) + ", not " + strconv.Quote(rule.service)
	case rule.global && a.Region != "":
		return "an IAM ARN has no region, so it starts with arn:" + a.Partition + ":iam::"
	case !rule.global && a.Region == "":
		return "the region is missing"
	case !rule.global && !region.MatchString(a.Region):
		return "the region " + strconv.Quote(a.Region) + " is not a region name such as us-east-1"
	case !rule.global && !regionInPartition(a.Region, a.Partition, prefix):
		return "the region " + strconv.Quote(a.Region) + " is not in the partition " + strconv.Quote(a.Partition)
	case !awsAccountID.MatchString(a.AccountID):
		return "the account id " + strconv.Quote(a.AccountID) + " is not 12 digits"
	}
	name, ok := strings.CutPrefix(a.Resource, rule.resourcePrefix)
	if !ok {
		return "the resource " + strconv.Quote(a.Resource) + " does not start with " + strconv.Quote(rule.resourcePrefix)
	}
	return rule.checkName(name)
}

// regionInPartition reports whether the region belongs to the partition
// whose regions begin with prefix.
func regionInPartition(region, partition, prefix string) bool {
	if prefix != "" {
		return strings.HasPrefix(region, prefix)
	}
	for p, other := range regionPrefixes {
		if p != partition && other != "" && strings.HasPrefix(region, other) {
			return false
		}
	}
	return true
}

// checkRoleName checks "NAME" or "PATH/NAME", what follows "role/" in a
// role ARN.
func checkRoleName(pathAndName string) string {
	segments := strings.Split(pathAndName, "/")
	name, path := segments[len(segments)-1], segments[:len(segments)-1]
	switch {
	case name == "":
		return "the role name is missing"
	case len(name) > maxRoleName:
		return "the role name is longer than " + strconv.Itoa(maxRoleName) + " characters"
	case !roleName.MatchString(name):
		return "the role name " + strconv.Quote(name) + " may hold only letters, digits and _+=,.@-"
	case len(pathAndName)-len(name) > maxRolePath:
		return "the role path is longer than " + strconv.Itoa(maxRolePath) + " characters"
	case slices.Contains(path, "") || !rolePath.MatchString(strings.Join(path, "")):
		return "the role path " + strconv.Quote(strings.Join(path, "/")) + " must be segments of printable ASCII separated by single slashes"
	}
	return ""
}
