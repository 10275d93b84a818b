// Package check holds the few assertion helpers sluice's tests share, such
// as ErrorContains, so that tests say what they expect in one line and fail
// with a message that shows what they got.
//
// It is for tests only, and is not an assertion library: most checks stay
// plain comparisons with t.Fatalf in the test itself, and helpers are added
// here only when several packages need the same one.
package check
