// Package retry holds sluice's one context-aware sleep and its one retry
// policy, so that every wait of production code ends with its context and
// every backoff grows, caps and jitters the same way.
//
// It is not a retry loop: callers keep their own loop, which knows what an
// attempt is and when to give up, and ask Policy for the delay before the
// next attempt and Sleep to wait it.
package retry
