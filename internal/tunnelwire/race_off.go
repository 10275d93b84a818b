//go:build !race

package tunnelwire

// raceDetector reports whether the race detector is in the build.
const raceDetector = false
