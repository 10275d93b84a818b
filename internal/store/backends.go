package store

import "time"

// TunnelGroupBackend is a backend of HTTPS edge routes: the account's
// labeled tunnels whose labels include all of its Labels, each of which
// takes a share of the requests of the routes it backs.
type TunnelGroupBackend struct {
	// ID is "bkdtg_" and a KSUID.
	ID string `json:"id"`
	// AccountID is the account that owns the backend.
	AccountID string `json:"account_id"`
	// CreatedAt is when the backend was created, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// Description is free text, at most 255 bytes.
	Description string `json:"description"`
	// Metadata is free text, at most 4096 bytes.
	Metadata string `json:"metadata"`
	// Labels select the tunnels: a tunnel is in the group when each of
	// them is one of its labels, with the same value.
	Labels map[string]string `json:"labels"`
}

// Selects reports whether the backend's group holds a tunnel with the
// labels.
func (b *TunnelGroupBackend) Selects(labels map[string]string) bool {
	if len(b.Labels) == 0 {
		return false
	}
	for k, v := range b.Labels {
		if w, ok := labels[k]; !ok || w != v {
			return false
		}
	}
	return true
}
