package resource

import (
	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/schemas"
)

// APIKeys is the family of API keys, /api_keys. A key's token is made by
// sluice and shown once, in the answer to its create.
func APIKeys() Spec {
	return Spec{
		Prefix: schemas.PrefixAPIKey, Path: apiwire.APIKeysPath, ListKey: apiwire.APIKeysListKey,
		Fields: append(described(Bytes), Field{Name: "token", Kind: String, ShownOnce: true}),
	}
}

// BotUsers is the family of bot users, /bot_users (specification sections
// 2.3 and 4.2). A bot user is created active.
func BotUsers() Spec {
	return Spec{
		Prefix: schemas.PrefixBotUser, Path: apiwire.BotUsersPath, ListKey: apiwire.BotUsersListKey,
		Fields: []Field{
			{Name: "name", Kind: String, Max: 255, Unit: Bytes, Required: true, Create: true, Update: true,
				Usage: "the bot user's name, 1 to {limit}, unique in the account ignoring case"},
			{Name: "active", Kind: Bool, Update: true,
				Usage: "whether the bot user is active: --active=false deactivates it"},
		},
	}
}

// Credentials is the family of tunnel credentials, /credentials
// (specification sections 2.4 and 5). A credential's token is made by
// sluice and shown once, in the answer to its create.
func Credentials() Spec {
	return Spec{
		Prefix: schemas.PrefixCredential, Path: apiwire.CredentialsPath, ListKey: apiwire.CredentialsListKey,
		Fields: append(described(Bytes),
			Field{Name: "token", Kind: String, ShownOnce: true},
			Field{Name: "acl", Kind: List, Create: true, Update: true,
				Usage: `what the token may bind, rules separated by commas: "*" (anything), bind:<domain>, bind:*.<domain>, bind:<host>:<port> or bind:<label>=<value>; --acl "" removes every rule`},
			Field{Name: "owner_id", Kind: String, Create: true, Update: true,
				Usage: `the bot user that owns the credential (bot_...); --owner-id "" removes the owner`}),
	}
}
