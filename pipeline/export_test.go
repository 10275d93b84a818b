package pipeline

// CheckRetained exposes checkRetained to the package's external tests.
var CheckRetained = checkRetained
