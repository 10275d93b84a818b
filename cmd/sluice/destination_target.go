package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/client"
	"github.com/sluicehq/sluice/sinks/desttype"
)

// destinationFlags are the flags of destinations create and update
// that set the target: a hook of destinationsFamily.
type destinationFlags struct {
	targets []destinationTargetFlag
	roleARN string
	keyID   string
	secret  string // never printed
}

// destinationTargetFlag is a flag that chooses the target's type and
// gives its ARN.
type destinationTargetFlag struct {
	flag       string
	targetType string // the key of the target in the API: "kinesis"
	arnField   string // the field of the ARN in the target: "stream_arn"
	usage      string
	arn        string
}

func newDestinationFlags() *destinationFlags {
	d := &destinationFlags{}
	for _, t := range desttype.All() {
		d.targets = append(d.targets, destinationTargetFlag{flag: t.Flag, targetType: t.Name, arnField: t.ARNField, usage: t.FlagUsage})
	}
	return d
}

// targetMissing returns the error of a destination without a target,
// saying how to give one.
func (d *destinationFlags) targetMissing() error {
	flags := make([]string, len(d.targets))
	for i, t := range d.targets {
		flags[i] = "--" + t.flag
	}
	last := len(flags) - 1
	return fmt.Errorf("give the target: one of %s and %s, with --role-arn or --aws-access-key-id (or a target in --data)",
		strings.Join(flags[:last], ", "), flags[last])
}

func (d *destinationFlags) register(fl *pflag.FlagSet) {
	for i := range d.targets {
		t := &d.targets[i]
		fl.StringVar(&t.arn, t.flag, "", t.usage)
	}
	fl.StringVar(&d.roleARN, "role-arn", "", "authenticate by assuming this IAM role, such as arn:aws:iam::123456789012:role/sluice")
	fl.StringVar(&d.keyID, "aws-access-key-id", "", "authenticate with this AWS access key, whose secret is in SLUICE_AWS_SECRET_ACCESS_KEY")
	fl.StringVar(&d.secret, "aws-secret-access-key", "", "the secret of --aws-access-key-id; prefer SLUICE_AWS_SECRET_ACCESS_KEY: flags show in process lists")
}

// apply sets body's target from the target flags given; stored returns
// the destination as stored (nil on create), for completing a target given
// in part.
func (d *destinationFlags) apply(fl *pflag.FlagSet, body map[string]any, stored func() (apiwire.Destination, error)) error {
	var current func() (map[string]any, error)
	if stored != nil {
		current = func() (map[string]any, error) { return storedTarget(stored) }
	}
	return d.applyTarget(fl, body, current)
}

// applyTarget sets body's target from the target flags given: the ARN
// flag chooses the type, --role-arn or --aws-access-key-id the auth; what
// they do not give comes from --data's target, else from current.
func (d *destinationFlags) applyTarget(fl *pflag.FlagSet, body map[string]any, current func() (map[string]any, error)) error {
	creating := current == nil
	var chosen []destinationTargetFlag
	for _, t := range d.targets {
		if flagGiven(fl, t.flag) {
			chosen = append(chosen, t)
		}
	}
	role, creds := flagGiven(fl, "role-arn"), flagGiven(fl, "aws-access-key-id")
	switch {
	case len(chosen) > 1:
		return fmt.Errorf("give --%s or --%s, not both: a destination has one target", chosen[0].flag, chosen[1].flag)
	case role && creds:
		return errors.New("give --role-arn or --aws-access-key-id, not both")
	case fl.Changed("aws-secret-access-key") && !creds:
		return errors.New("--aws-secret-access-key needs --aws-access-key-id")
	case creds && creating && d.secret == "":
		return errors.New("--aws-access-key-id needs its secret: set SLUICE_AWS_SECRET_ACCESS_KEY (or give --aws-secret-access-key)")
	}
	if len(chosen) == 0 && !role && !creds {
		if creating && body["target"] == nil {
			return d.targetMissing()
		}
		return nil
	}
	targetType, target, err := baseTarget(body, current)
	if err != nil {
		return err
	}
	if len(chosen) == 1 {
		t := chosen[0]
		if targetType != t.targetType {
			fresh := map[string]any{}
			if auth, ok := target["auth"]; ok {
				fresh["auth"] = auth
			}
			targetType, target = t.targetType, fresh
		}
		target[t.arnField] = t.arn
	}
	if targetType == "" {
		return d.targetMissing()
	}
	switch {
	case role:
		target["auth"] = map[string]any{"role": map[string]any{"role_arn": d.roleARN}}
	case creds:
		keyPair := map[string]any{"aws_access_key_id": d.keyID}
		if d.secret != "" {
			keyPair["aws_secret_access_key"] = d.secret
		}
		target["auth"] = map[string]any{"creds": keyPair}
	}
	body["target"] = map[string]any{targetType: target}
	return nil
}

// baseTarget returns the type and fields of the target that the flags
// change: --data's, else the stored one (on update), else none.
func baseTarget(body map[string]any, current func() (map[string]any, error)) (string, map[string]any, error) {
	var target map[string]any
	switch t := body["target"].(type) {
	case map[string]any:
		target = t
	case nil:
		if current != nil {
			stored, err := current()
			if err != nil {
				return "", nil, err
			}
			target = stored
		}
	default:
		return "", nil, errors.New("--data: target must be a JSON object")
	}
	if len(target) == 1 {
		for targetType, fields := range target {
			object, ok := fields.(map[string]any)
			if !ok {
				return "", nil, fmt.Errorf("--data: target.%s must be a JSON object", targetType)
			}
			return targetType, object, nil
		}
	}
	return "", map[string]any{}, nil // none, or not one: the ARN flag chooses
}

// storedTarget returns the target of the destination stored returns, as
// the API returns it: without the secret.
func storedTarget(stored func() (apiwire.Destination, error)) (map[string]any, error) {
	destination, err := stored()
	var decodeErr *client.DecodeError
	if errors.As(err, &decodeErr) {
		return nil, fmt.Errorf("the API's answer is not a destination: %w", decodeErr.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the destination to keep the rest of its target: %w", err)
	}
	raw, err := encodeJSON(map[string]apiwire.Target{"target": destination.Target})
	if err != nil {
		return nil, err
	}
	object, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	target, _ := object["target"].(map[string]any)
	return target, nil
}
