// Package sessionservice answers the requests of package appsession: it
// records, refreshes and ends application sessions in the store, the one
// place their rules are checked and the per-account limit kept, and
// removes the sessions past their expiry. sluice serve runs it in every
// process with the api role. It is not the API's /app/sessions, which
// reads and revokes them.
package sessionservice
