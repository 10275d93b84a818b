// Package desttype lists the types of destination target sluice delivers
// to, each declared by its sink's package (kinesis.TargetType, ...), so
// that the API, the store, the pipeline and the CLI find a type's rules,
// flags and sink here instead of naming each type themselves. Adding a type
// is its package and one line in All.
//
// It is not the place for a type's behaviour: that is its package's.
package desttype
