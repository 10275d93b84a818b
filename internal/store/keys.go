package store

import (
	"crypto/sha256"
	"encoding/hex"
)

// The key layout of the bucket. Every key of a resource owned by an account
// starts with the resource's kind and then the account id, so that all keys
// of one kind, or of one kind and account, match one filter. The keys of
// the resources of a family (agent_ingresses, api_keys, destinations,
// subscriptions, bot_users, credentials, https_edges, https_edge_routes,
// tunnel_group_backends) are made from its kind (family.key).
//
//	accounts.<account_id>                                     Account
//	agent_ingresses.<account_id>.<agent_ingress_id>           AgentIngress
//	agent_ingress_domains.<hex sha-256 of folded domain>      uniqueEntry (written with its AgentIngress; across accounts)
//	account_names.<hex sha-256 of folded name>                accountNameIndex (written with its Account)
//	app_sessions.<account_id>.<app_session_id>                AppSession (hidden once expired; RemoveExpiredAppSessions deletes it)
//	api_keys.<account_id>.<api_key_id>                        APIKey (without its token)
//	api_key_hashes.<hex sha-256 of token>                     apiKeyIndex (written before the APIKey)
//	api_key_deletions.<account_id>                            keyDeletions (API keys being deleted)
//	bootstrap                                                 bootstrapClaim
//	destinations.<account_id>.<destination_id>                Destination (with its secret access key)
//	subscriptions.<account_id>.<subscription_id>              Subscription
//	replays.<account_id>.<replay_id>                          Replay
//	bot_users.<account_id>.<bot_user_id>                      BotUser
//	bot_user_names.<account_id>.<hex sha-256 of folded name>  uniqueEntry (written with its BotUser)
//	credentials.<account_id>.<credential_id>                  Credential (with the hash of its token, never the token)
//	credential_hashes.<hex sha-256 of token>                  credentialIndex (written and deleted with its Credential)
//	https_edges.<account_id>.<edge_id>                        HTTPSEdge
//	https_edge_routes.<account_id>.<route_id>                 HTTPSEdgeRoute (its edge in EdgeID; deleted with the edge)
//	https_edge_route_matches.<account_id>.<hex sha-256>       uniqueEntry (of match type, match and edge; written with its HTTPSEdgeRoute)
//	tunnel_group_backends.<account_id>.<backend_id>           TunnelGroupBackend (rewritten by a route's write that gives it to the route)
//	reserved_domains.<account_id>.<reserved_domain_id>        ReservedDomain
//	reserved_domain_names.<hex sha-256 of folded domain>      uniqueEntry (written with its ReservedDomain; all accounts)
//	tunnel_sessions.<account_id>.<tunnel_session_id>          TunnelSession (hidden once its edge is gone; RemoveDeadEdgeRecords deletes it)
//	endpoints.<account_id>.<endpoint_id>                      Endpoint (its session in TunnelSessionID; deleted with the session)
//	edge_heartbeats.<edge_id>                                 edgeHeartbeat (HeartbeatEdge)
//	creations.<account_id>.<kind>                             creationClaims (creates under way, for Limits)
//	route_counts.<account_id>                                 routeCount (rewritten by every subscription write, for Limits.Routes)

// bootstrapKey is the key Bootstrap claims before it creates anything.
const bootstrapKey = "bootstrap"

// Filters matching every key of one kind.
const (
	allAccounts = "accounts.*"
	allAPIKeys  = "api_keys.>"

	allDestinations  = "destinations.>"
	allSubscriptions = "subscriptions.>"
)

func accountKey(accountID string) string { return "accounts." + accountID }

// accountNameKey is the index key of an account name: any two names equal
// ignoring case (see foldName) have one key.
func accountNameKey(name string) string { return "account_names." + foldedHash(name) }

// foldedHash is the hex SHA-256 of the name folded (see foldName).
func foldedHash(name string) string {
	sum := sha256.Sum256([]byte(foldName(name)))
	return hex.EncodeToString(sum[:])
}

// agentIngressDomainKey is the index key of an agent ingress's domain,
// across all accounts (an index across accounts ignores the account).
func agentIngressDomainKey(_, domain string) string {
	return "agent_ingress_domains." + foldedHash(domain)
}

func apiKeyHashKey(tokenHash string) string { return "api_key_hashes." + tokenHash }

func apiKeyDeletionsKey(accountID string) string { return "api_key_deletions." + accountID }

// botUserNameKey is the index key of a bot user's name within its account:
// any two names equal ignoring case (see foldName) have one key.
func botUserNameKey(accountID, name string) string {
	return "bot_user_names." + accountID + "." + foldedHash(name)
}
