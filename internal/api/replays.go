package api

import (
	"context"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/apiwire"
	"github.com/sluicehq/sluice/internal/apiconv"
	"github.com/sluicehq/sluice/internal/store"
)

// Replays starts and reads the replays of subscriptions.
// *pipeline.Replayer implements it; see its methods for the errors each
// returns.
type Replays interface {
	StartReplay(ctx context.Context, accountID, subscriptionID string, since, until time.Time) (store.Replay, error)
	GetReplay(ctx context.Context, accountID, id string) (store.Replay, error)
	ListReplays(ctx context.Context, accountID, subscriptionID string) ([]store.Replay, error)
}

// routeReplays registers the replay routes of subscriptions.
func (s *Server) routeReplays() {
	s.mux.Handle("POST /event_subscriptions/{id}/replay", s.authenticated(http.HandlerFunc(s.startReplay)))
	s.mux.Handle("GET /event_subscriptions/{id}/replays", s.authenticated(http.HandlerFunc(s.listReplays)))
	s.takeQuery("GET /event_subscriptions/{id}/replays", queryRule{unfiltered: "the replays of a subscription", why: "they are few, all on one page"})
	s.mux.Handle("GET /event_subscriptions/{id}/replays/{replay_id}", s.authenticated(http.HandlerFunc(s.getReplay)))
}

// replayResource names replays in messages.
var replayResource = resource{noun: "replay"}

// replayInput is the body of POST /event_subscriptions/{id}/replay.
type replayInput struct {
	Since *string `json:"since"`
	Until *string `json:"until"`
}

// times parses the input's times; until is zero when left out.
func (in replayInput) times() (since, until time.Time, e *apiconv.Error) {
	if in.Since == nil {
		e = apiconv.NewError(apiconv.CodeInvalidField, "since is required: the time (RFC 3339) of the first event to deliver again")
		e.Details = map[string]string{"field": "since"}
		return
	}
	parse := func(field, value string) (time.Time, *apiconv.Error) {
		t, err := time.Parse(time.RFC3339Nano, value)
		if err != nil {
			e := apiconv.NewError(apiconv.CodeInvalidField, "%s %q is not an RFC 3339 time, such as 2026-11-23T04:00:00Z", field, value)
			e.Details = map[string]string{"field": field}
			return time.Time{}, e
		}
		return t, nil
	}
	if since, e = parse("since", *in.Since); e != nil {
		return
	}
	if in.Until != nil {
		until, e = parse("until", *in.Until)
	}
	return
}

func replaysPath(subscriptionID string) string { return subscriptionPath(subscriptionID) + "/replays" }

func (s *Server) replayResponse(r *http.Request, replay store.Replay) apiwire.Replay {
	replayed, total := replay.Progress()
	return apiwire.Replay{
		ID:             replay.ID,
		URI:            s.resourceURI(r, replaysPath(replay.SubscriptionID)+"/"+replay.ID),
		SubscriptionID: replay.SubscriptionID,
		Since:          replay.Since.UTC().Format(createdAtLayout),
		Until:          replay.Until.UTC().Format(createdAtLayout),
		State:          replay.State,
		EventsReplayed: replayed,
		EventsTotal:    total,
		CreatedAt:      replay.CreatedAt.UTC().Format(createdAtLayout),
	}
}

func (s *Server) startReplay(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var in replayInput
	if e := decodeBody(w, r, &in); e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	since, until, e := in.times()
	if e != nil {
		apiconv.WriteError(w, r, e)
		return
	}
	replay, err := s.replays.StartReplay(r.Context(), apiconv.RequestKey(r.Context()).AccountID, id, since, until)
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	apiconv.WriteJSON(w, http.StatusAccepted, s.replayResponse(r, replay))
}

func (s *Server) listReplays(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	accountID := apiconv.RequestKey(r.Context()).AccountID
	if _, err := s.subscriptions.GetSubscription(r.Context(), accountID, id); err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	replays, err := s.replays.ListReplays(r.Context(), accountID, id)
	if err != nil {
		s.writeStoreError(w, r, err, subscriptionResource, id)
		return
	}
	// The replays of a subscription are newest first on one page: its
	// next_page_uri is null.
	list := apiwire.Page[apiwire.Replay]{Key: "replays", Items: make([]apiwire.Replay, len(replays)), URI: s.resourceURI(r, replaysPath(id))}
	for i, replay := range replays {
		list.Items[i] = s.replayResponse(r, replay)
	}
	apiconv.WriteJSON(w, http.StatusOK, list)
}

func (s *Server) getReplay(w http.ResponseWriter, r *http.Request) {
	id, replayID := r.PathValue("id"), r.PathValue("replay_id")
	replay, err := s.replays.GetReplay(r.Context(), apiconv.RequestKey(r.Context()).AccountID, replayID)
	if err == nil && replay.SubscriptionID != id {
		err = store.ErrNotFound
	}
	if err != nil {
		res := replayResource
		res.listPath = replaysPath(id)
		s.writeStoreError(w, r, err, res, replayID)
		return
	}
	apiconv.WriteJSON(w, http.StatusOK, s.replayResponse(r, replay))
}
