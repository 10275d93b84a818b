// Package awstest is what the unit tests of the AWS sinks share. Server is
// a scripted AWS JSON endpoint for the tests of the sinks' real SDK clients:
// it records every call (target, headers, body) and answers each with the
// status and body a test sets per target. With Isolate, the SDK sees only
// the test's environment. APIError is the SDK's error of a refused call, for
// a fake client to return; CheckValidate, CheckHidesSecret and CheckResults
// are the checks every AWS sink's Config and Write pass.
//
// It is for checking what a fake of the client interface cannot (signing,
// region, retries, endpoints) and the sinks' common contract; behaviour
// against a faithful server is the emulator's and kinesalite's.
package awstest
