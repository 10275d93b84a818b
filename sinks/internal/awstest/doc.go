// Package awstest is a scripted AWS JSON endpoint for the tests of the AWS
// sinks' real SDK clients: it records every call (target, headers, body)
// and answers each with the status and body a test sets per target. With
// Isolate, the SDK sees only the test's environment.
//
// It is for checking what a fake of the client interface cannot (signing,
// region, retries, endpoints); behaviour against a faithful server is the
// emulator's and kinesalite's.
package awstest
