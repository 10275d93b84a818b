package store

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/sinks/targets"
)

// Lengths of static credentials, in bytes. AWS access key ids are 16 to 128
// word characters and secret keys 40 characters; emulators accept shorter
// ones such as "test", so only the upper bounds are AWS's.
const (
	maxAccessKeyID     = 128
	maxSecretAccessKey = 256
)

var (
	accessKeyID     = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	secretAccessKey = regexp.MustCompile(`^[\x21-\x7e]+$`) // printable ASCII, no spaces
)

// check normalizes the destination (Format to FormatJSON) and returns a
// *ValidationError for the first field that breaks a rule, or nil.
func (d *Destination) check() error {
	spec := resource.EventDestinations()
	if err := checkText(spec.Field("description"), d.Description); err != nil {
		return err
	}
	if err := checkText(spec.Field("metadata"), d.Metadata); err != nil {
		return err
	}
	if d.Format != "" && !strings.EqualFold(d.Format, FormatJSON) {
		return invalid("format", "%q is not a format sluice delivers in: the only format is json", d.Format)
	}
	d.Format = FormatJSON
	return d.Target.check()
}

// check returns a *ValidationError for the first field of the target that
// breaks a rule, or nil. The rules of a type's ARN are its type's.
func (t Target) check() error {
	set := t.members()
	switch len(set) {
	case 0:
		return invalid("target", "is required: set exactly one of %s", targetChoices())
	case 1:
	default:
		return invalid("target", "sets %s: set exactly one target, and create one destination per target", strings.Join(t.types(), " and "))
	}
	m := set[0]
	typ, ok := targets.Named(m.typ)
	if !ok {
		return fmt.Errorf("target type %q is not one of package targets'", m.typ)
	}
	return checkTargetARN("target."+typ.Name, typ.ARNField, *m.arn, targetARNRule(typ.ARN), *m.auth)
}

// targetChoices names the fields of a target, "target.a, target.b or
// target.c".
func targetChoices() string {
	var names []string
	for _, f := range (&Target{}).fields() {
		names = append(names, "target."+f.typ)
	}
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}

// checkTargetARN checks the ARN of a target, in the field arnField of the
// target at path, and its authentication.
func checkTargetARN(path, arnField, value string, rule arnRule, auth AWSAuth) error {
	parsed, err := checkARN(path+"."+arnField, value, rule)
	if err != nil {
		return err
	}
	return auth.check(path+".auth", parsed.Partition)
}

// check returns a *ValidationError for the first field of the
// authentication at path that breaks a rule, or nil. partition is the
// target's: a role can only be assumed in its own partition.
func (a AWSAuth) check(path, partition string) error {
	switch {
	case a.Role == nil && a.Creds == nil:
		return invalid(path, "is required: set exactly one of %s.role (an IAM role sluice assumes) or %s.creds (an access key)", path, path)
	case a.Role != nil && a.Creds != nil:
		return invalid(path, "sets both role and creds: set exactly one")
	case a.Role != nil:
		field := path + ".role.role_arn"
		parsed, err := checkARN(field, a.Role.RoleARN, roleARN)
		if err != nil {
			return err
		}
		if parsed.Partition != partition {
			return invalid(field, "the role is in the partition %q and the target in %q: use a role of the target's partition", parsed.Partition, partition)
		}
		return nil
	default:
		return a.Creds.check(path + ".creds")
	}
}

// check returns a *ValidationError for the first field of the credentials
// at path that breaks a rule, or nil. Messages never quote the secret.
func (c AWSCreds) check(path string) error {
	idField, secretField := path+".aws_access_key_id", path+".aws_secret_access_key"
	switch {
	case c.AccessKeyID == "":
		return invalid(idField, "is required: give the access key id, such as AKIAIOSFODNN7EXAMPLE")
	case len(c.AccessKeyID) > maxAccessKeyID || !accessKeyID.MatchString(c.AccessKeyID):
		return invalid(idField, "is not an access key id: it must be at most %d letters and digits, such as AKIAIOSFODNN7EXAMPLE", maxAccessKeyID)
	case c.SecretAccessKey == "":
		return invalid(secretField, "is required with aws_access_key_id: give the secret access key of the access key")
	case len(c.SecretAccessKey) > maxSecretAccessKey || !secretAccessKey.MatchString(c.SecretAccessKey):
		return invalid(secretField, "is not a secret access key: it must be at most %d printable ASCII characters without spaces", maxSecretAccessKey)
	}
	return nil
}

// sameTargetType returns a *ValidationError if a destination's target type
// changes from was to is.
func sameTargetType(was, is string) error {
	if was != is {
		return invalid("target", "target type cannot change (it is %s, not %s); create a new destination", was, is)
	}
	return nil
}
