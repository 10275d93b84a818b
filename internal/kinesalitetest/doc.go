// Package kinesalitetest runs kinesalite, a Kinesis Data Streams emulator,
// for tests: it starts one on a free loopback port, creates streams in it and
// reads back every record written to them.
//
// kinesalite is an npm package pinned by the repository's package-lock.json;
// `npm ci` (which `make test` runs first) installs it under node_modules/.
// Tests that call Start fail, saying so, when it is not installed.
//
// It is for tests only, and for the end-to-end tests of real Kinesis clients:
// unit tests of error handling fake the SDK instead (kinesalite neither
// throttles nor denies access).
package kinesalitetest
