package store

import (
	"context"
	"sync"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// Temporary until the edge-store branch lands.

type TunnelSession struct {
	ID            string    `json:"id"`
	AccountID     string    `json:"account_id"`
	AgentVersion  string    `json:"agent_version"`
	CredentialID  string    `json:"credential_id"`
	IP            string    `json:"ip"`
	Metadata      string    `json:"metadata"`
	OS            string    `json:"os"`
	Arch          string    `json:"arch"`
	Region        string    `json:"region"`
	Transport     string    `json:"transport"`
	UserAgent     string    `json:"user_agent"`
	StartedAt     time.Time `json:"started_at"`
	EdgeID        string    `json:"edge_id"`
	StopRequested bool      `json:"stop_requested"`
}

type Endpoint struct {
	ID              string    `json:"id"`
	AccountID       string    `json:"account_id"`
	TunnelSessionID string    `json:"tunnel_session_id"`
	CreatedAt       time.Time `json:"created_at"`
	Proto           string    `json:"proto"`
	URL             string    `json:"url"`
	PublicURL       string    `json:"public_url"`
	Hostport        string    `json:"hostport"`
	Domain          string    `json:"domain"`
	UpstreamURL     string    `json:"upstream_url"`
	Metadata        string    `json:"metadata"`
	Description     string    `json:"description"`
	EdgeID          string    `json:"edge_id"`
}

// Stand-ins until the edge-store branch lands: in memory, one process.

var tmpEdge = struct {
	sync.Mutex
	sessions  map[string]TunnelSession
	endpoints map[string]Endpoint
}{sessions: map[string]TunnelSession{}, endpoints: map[string]Endpoint{}}

func (s *Store) AuthenticateCredential(ctx context.Context, token string) (Credential, error) {
	h := hashToken(token)
	for _, acct := range tmpAccounts(ctx, s) {
		for page := (Page{Limit: MaxPageLimit}); ; {
			creds, next, err := s.ListCredentials(ctx, acct, page)
			if err != nil {
				return Credential{}, err
			}
			for _, c := range creds {
				if c.TokenHash == h {
					return c, nil
				}
			}
			if next == "" {
				break
			}
			page.BeforeID = next
		}
	}
	return Credential{}, ErrUnauthenticated
}

func tmpAccounts(ctx context.Context, s *Store) []string {
	accts, _ := s.ListAccounts(ctx)
	var ids []string
	for _, a := range accts {
		ids = append(ids, a.ID)
	}
	return ids
}

func (s *Store) CreateTunnelSession(_ context.Context, accountID string, in TunnelSession) (TunnelSession, error) {
	tmpEdge.Lock()
	defer tmpEdge.Unlock()
	in.ID, in.AccountID = schemas.NewID("ts_"), accountID
	tmpEdge.sessions[in.ID] = in
	return in, nil
}

func (s *Store) DeleteTunnelSession(_ context.Context, _, id string) error {
	tmpEdge.Lock()
	defer tmpEdge.Unlock()
	delete(tmpEdge.sessions, id)
	return nil
}

func (s *Store) CreateEndpoint(_ context.Context, accountID string, in Endpoint) (Endpoint, error) {
	tmpEdge.Lock()
	defer tmpEdge.Unlock()
	in.ID, in.AccountID = schemas.NewID(schemas.PrefixEndpoint), accountID
	tmpEdge.endpoints[in.ID] = in
	return in, nil
}

func (s *Store) DeleteEndpoint(_ context.Context, _, id string) error {
	tmpEdge.Lock()
	defer tmpEdge.Unlock()
	delete(tmpEdge.endpoints, id)
	return nil
}

func (s *Store) HeartbeatEdge(context.Context, string) error { return nil }

const (
	EdgeCredential     = "credential"
	EdgeBotUser        = "bot_user"
	EdgeReservedDomain = "reserved_domain"
	EdgeTunnelSession  = "tunnel_session"
)

type EdgeChange struct {
	Kind, AccountID, ID string
	Deleted             bool
	BotUser             *BotUser
	TunnelSession       *TunnelSession
	ReservedDomain      *ReservedDomain
}

func (s *Store) WatchEdge(ctx context.Context) (<-chan EdgeChange, error) {
	ch := make(chan EdgeChange)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}
