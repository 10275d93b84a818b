package resource

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sluicehq/sluice/schemas"
)

// The rules of labels: those of a tunnel group backend, which select
// tunnels, and those an agent binds a labeled tunnel with. The store
// checks a backend's and a labeled endpoint's with CheckLabels, and the
// edge an agent's labeled bind, so that one rule holds on both sides.
const (
	// MaxLabels is the most labels of a backend or a labeled tunnel.
	MaxLabels = 10
	// MaxLabelName is the longest label name, in bytes.
	MaxLabelName = 64
	// MaxLabelValue is the longest label value, in bytes.
	MaxLabelValue = 255
)

// The rules CheckLabels states in its errors.
const (
	labelNameRule  = "a label name is 1 to 64 bytes of lowercase letters, digits, '-', '_' and '.', starting with a letter or a digit"
	labelValueRule = "a label value is 1 to 255 bytes of printable ASCII without spaces"
)

// ErrInvalidLabels is matched by every *LabelsError.
var ErrInvalidLabels = errors.New("invalid labels")

// LabelsError is a set of labels that breaks a rule of CheckLabels. It
// matches ErrInvalidLabels.
type LabelsError struct {
	// Label is the name of the offending label, "" when the set as a whole
	// breaks a rule (none, or too many).
	Label string
	// Msg says what is wrong and what the rule is.
	Msg string
}

// Error returns Msg.
func (e *LabelsError) Error() string { return e.Msg }

// Is reports whether target is ErrInvalidLabels.
func (e *LabelsError) Is(target error) bool { return target == ErrInvalidLabels }

// CheckLabels returns a *LabelsError (matching ErrInvalidLabels) if
// labels breaks a rule: it has 1 to MaxLabels labels; each name is 1 to
// MaxLabelName bytes of lowercase letters, digits, '-', '_' and '.',
// starting with a letter or a digit; each value is 1 to MaxLabelValue
// bytes of printable ASCII without spaces. The labels are checked in
// the order of their names, so the error names the first offending one
// by that order, whatever the map's.
func CheckLabels(labels map[string]string) error {
	switch {
	case len(labels) == 0:
		return &LabelsError{Msg: fmt.Sprintf("there are no labels: give 1 to %d, such as env=prod", MaxLabels)}
	case len(labels) > MaxLabels:
		return &LabelsError{Msg: fmt.Sprintf("there are %d labels, more than %d: remove some", len(labels), MaxLabels)}
	}
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		if !validLabelName(name) {
			return &LabelsError{Label: name, Msg: fmt.Sprintf("the label name %q is not valid: %s", schemas.Clip(name), labelNameRule)}
		}
		if value := labels[name]; !validLabelValue(value) {
			return &LabelsError{Label: name, Msg: fmt.Sprintf("the value %q of label %s is not valid: %s", schemas.Clip(value), name, labelValueRule)}
		}
	}
	return nil
}

func validLabelName(name string) bool {
	if name == "" || len(name) > MaxLabelName || !lowerOrDigit(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !lowerOrDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func lowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func validLabelValue(value string) bool {
	if value == "" || len(value) > MaxLabelValue {
		return false
	}
	for i := range len(value) {
		if c := value[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
