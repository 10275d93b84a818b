// Package defaults fills in the settings a configuration leaves at zero.
package defaults

// Number is a setting that a default replaces when it is not positive:
// counts, sizes, rates and durations.
type Number interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64 | ~float64
}

// Positive sets *v to d when *v is zero or negative: a setting left out
// (or given as nonsense) takes its default.
func Positive[T Number](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
