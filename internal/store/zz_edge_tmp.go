package store

import "time"

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
