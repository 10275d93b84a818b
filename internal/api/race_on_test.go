//go:build race

package api_test

// latencyBound is how long A's POST /events may take under an attack: a
// second, as the front door promises, stretched under the race detector,
// which slows the decoding of the attacker's bodies several times.
const latencyBound = 3e9
