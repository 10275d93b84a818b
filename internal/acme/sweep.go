package acme

import "context"

// staleChallenges is what the sweep of challenge values writes to: the
// store's ACME challenges.
type staleChallenges interface {
	DropStaleACMEChallenges(ctx context.Context) (int, error)
}

// sweepChallenges drops the TXT values that no job removed, a job having
// died mid-order (killed, or its lease lost), once they are
// store.MaxACMEChallengeAge old: a token that no job adds to again would
// keep them, and sluice's DNS answer them, for ever. The lease holder
// runs it at each tick; an error is logged, and the next tick tries
// again.
func (m *Manager) sweepChallenges(ctx context.Context) {
	dropped, err := m.store.DropStaleACMEChallenges(ctx)
	if dropped > 0 {
		m.cfg.Logger.Info("dropped stale ACME challenge values", "values", dropped)
	}
	if err != nil {
		m.cfg.Logger.Warn("dropping stale ACME challenge values", "error", err)
	}
}
