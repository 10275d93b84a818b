// Package sessionservice answers the requests of package appsession: it
// records, refreshes and ends application sessions in the store, the one
// place their rules are checked and the per-account limit kept, and
// removes the sessions past their expiry. sluice serve runs it in every
// process with the api role. It is not the API's /app/sessions, which
// reads and revokes them.
//
// Expired sessions are removed by a sweep (Config.SweepInterval) rather
// than by a per-message TTL of the store's bucket: the store hides a
// session from the instant of its expires_at by its own clock (which tests
// move on), so the sweep only frees space; and a TTL would have to be set
// again on every refresh, in the atomic batches the store writes with, on
// a bucket every other resource shares.
package sessionservice
