package api

import (
	"context"
	"net/http"

	"github.com/sluicehq/sluice/apiwire"
	declared "github.com/sluicehq/sluice/internal/resource"
	"github.com/sluicehq/sluice/internal/store"
)

// routeBotUsers serves the family of bot users (specification sections 2.3
// and 4.2). The catalogue has no audit kinds for them: their changes emit
// no audit event.
func (s *Server) routeBotUsers() {
	b := s.botUsers
	route(s, family[store.BotUser, apiwire.BotUserInput, apiwire.BotUserInput, apiwire.BotUser]{
		spec: declared.BotUsers(), res: botUserResource,
		create: b.CreateBotUser, get: b.GetBotUser, list: b.ListBotUsers, update: b.UpdateBotUser, delete: b.DeleteBotUser,
		applyCreate: applyBotUser, applyUpdate: applyBotUser,
		body: s.botUserResponse,
	})
}

func (s *Server) botUserResponse(r *http.Request, b store.BotUser) apiwire.BotUser {
	return apiwire.BotUser{
		ID:        b.ID,
		URI:       s.resourceURI(r, botUserResource.listPath+"/"+b.ID),
		Name:      b.Name,
		Active:    b.Active,
		CreatedAt: b.CreatedAt.UTC().Format(createdAtLayout),
	}
}

// applyBotUser sets the fields of a create or an update sent. A create
// takes no active: the store creates the bot user active.
func applyBotUser(in apiwire.BotUserInput, b *store.BotUser) {
	setSent(&b.Name, in.Name)
	setSent(&b.Active, in.Active)
}

// BotUsers keeps the bot users of accounts. *store.Store implements it; see
// its methods for the errors each returns.
type BotUsers interface {
	CreateBotUser(ctx context.Context, accountID string, in store.BotUser, opts ...store.WriteOption) (store.BotUser, error)
	GetBotUser(ctx context.Context, accountID, id string) (store.BotUser, error)
	ListBotUsers(ctx context.Context, accountID string, page store.Page) ([]store.BotUser, string, error)
	UpdateBotUser(ctx context.Context, accountID, id string, fn func(*store.BotUser) error, opts ...store.WriteOption) (store.BotUser, error)
	DeleteBotUser(ctx context.Context, accountID, id string, opts ...store.WriteOption) (store.BotUser, error)
}
