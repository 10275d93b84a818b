//go:build !race

package api_test

// latencyBound is how long A's POST /events may take under an attack: a
// second, as the front door promises.
const latencyBound = 1e9
