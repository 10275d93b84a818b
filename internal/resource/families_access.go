package resource

import (
	"reflect"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/schemas"
)

// APIKeys is the family of API keys, /api_keys. A key's token is made by
// sluice and shown once, in the answer to its create.
func APIKeys() Spec {
	return Spec{
		Prefix: schemas.PrefixAPIKey, Path: apiwire.APIKeysPath, ListKey: apiwire.APIKeysListKey,
		Fields: append(described(Bytes), Field{Name: "token", Kind: String, ShownOnce: true}),
		Doc: Doc{
			Stem: "APIKey", Plural: "APIKeys", Tag: "api_keys",
			Item: "key", Items: "keys",
			Create: &Op{Summary: "Create an API key.",
				Description: "The answer holds the key's `token`, the bearer token: it is shown this once\n" +
					"(sluice keeps only its hash) and is null in every other answer.\n",
				Answer: Answer{Description: "The key was created; `token` holds its bearer token.", Schema: "APIKeyCreated"}},
			List: &Op{Summary: "List API keys, newest first.",
				Answer: Answer{Description: "A page of keys, without their tokens."}},
			Get:    &Op{Summary: "Get an API key, without its token."},
			Update: &Op{Summary: "Change the description or metadata of an API key."},
			Delete: &Op{Summary: "Delete an API key; its token stops working at once.",
				Description: "A key may delete itself. The account's only key cannot be deleted (409\n" +
					"`ERR_SLUICE_423`): create another one first.\n",
				Errors: []int{409}},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.APIKey](), Input: reflect.TypeFor[apiwire.APIKeyInput](),
				ID:       "an API key",
				Resource: "An API key, without its token (`token` is null).",
				Created:  "A new API key, with its token, shown this once.",
				Create:   "A new API key.",
				List:     "A page of keys, newest first, without their tokens.",
				Response: "The key, without its token."},
		},
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
		Doc: Doc{
			Stem: "BotUser", Plural: "BotUsers", Tag: "bot_users",
			Item: "bot user", Items: "bot users",
			Create: &Op{Summary: "Create a bot user, active.",
				Description: "`name` is required and unique within the account, ignoring case: a name another\n" +
					"bot user of the account has is 409 `ERR_SLUICE_425`.\n",
				Answer: Answer{Response: "BotUser200"}},
			List: &Op{Summary: "List bot users, newest first.",
				Answer: Answer{Description: "A page of bot users."}},
			Get:    &Op{Summary: "Get a bot user."},
			Update: &Op{Summary: "Rename a bot user, or make it active or inactive."},
			Delete: &Op{Summary: "Delete a bot user.",
				Description: "A bot user that owns tunnel credentials is not deleted (409 `ERR_SLUICE_426`,\n" +
					"`details.credentials` listing them): delete them, or give them another owner, first.\n",
				Errors: []int{409}},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.BotUser](), Input: reflect.TypeFor[apiwire.BotUserInput](),
				ID:       "a bot user",
				Resource: "A user that is a program, not a person.",
				Create:   "A new bot user; it is created active.",
				List:     "A page of bot users, newest first.",
				Response: "The bot user."},
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
		Doc: Doc{
			Stem: "Credential", Plural: "Credentials", Tag: "credentials",
			Item: "credential", Items: "credentials",
			Create: &Op{Summary: "Create a tunnel credential.",
				Description: "The answer holds the credential's `token`, the authtoken an agent connects with:\n" +
					"it is shown this once (sluice keeps only its hash) and is null in every other\n" +
					"answer and in the `tunnel_credential_*` audit events. `acl` limits what the token\n" +
					"may bind: each rule is `*` (no restriction, as no rule at all) or `bind:` and a\n" +
					"domain (`bind:app.example.com`), a wildcard domain (`bind:*.example.com`, every\n" +
					"name under example.com but not example.com itself) or a `host:port` address\n" +
					"(`bind:example.com:8443`), or a label of labeled tunnels (`bind:edge=web`,\n" +
					"`bind:edge=*`); any other rule is 400 `ERR_SLUICE_333` quoting it, `details.field` `acl[i]`.\n" +
					"`owner_id` is a bot user of the account, or absent.\n",
				Answer: Answer{Description: "The credential was created; `token` holds its authtoken.", Schema: "CredentialCreated"}},
			List: &Op{Summary: "List tunnel credentials, newest first.",
				Answer: Answer{Description: "A page of credentials, without their tokens."}},
			Get: &Op{Summary: "Get a tunnel credential, without its token."},
			Update: &Op{Summary: "Change the description, metadata, ACL or owner of a tunnel credential.",
				Description: "The fields sent are set. `acl: []` removes every rule; `owner_id: \"\"` removes the\n" +
					"owner. The token cannot be changed: create another credential.\n"},
			Delete: &Op{Summary: "Delete a tunnel credential."},
			Schemas: Schemas{Wire: reflect.TypeFor[apiwire.Credential](), Input: reflect.TypeFor[apiwire.CredentialInput](),
				ID:       "a tunnel credential",
				Resource: "A tunnel credential, without its token (`token` is null).",
				Created:  "A new tunnel credential, with its token, shown this once.",
				Create:   "A new tunnel credential; sluice makes its token.",
				List:     "A page of tunnel credentials, newest first, without their tokens.",
				Response: "The tunnel credential, without its token."},
		},
	}
}
