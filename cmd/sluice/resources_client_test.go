package main

import "github.com/sluicehq/sluice/client"

// newAPIError is the error of an API's reply as the commands print it:
// client.ParseError's, whose words were this package's, for the tests
// written against them.
func newAPIError(method, endpoint string, status int, raw []byte) error {
	return client.ParseError(method, endpoint, status, raw)
}
