package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/internal/apitest"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/schemas"
)

// TestDeleteDeadLetters discards dead letters one by one and by a filter:
// a deleted letter is gone from the list, a second delete of it, a letter
// of another account and an id that is none are 404, and a filtered
// delete removes only the letters every field of its body matches.
func TestDeleteDeadLetters(t *testing.T) {
	e := newDeadLetterEnv(t)
	ctx := t.Context()
	resp, out := e.call(t, e.token, http.MethodPost, "/event_destinations", `{"target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":"`+testKeyID+`","aws_secret_access_key":"`+testSecret+`"}},"stream_arn":"`+testStreamARN+`"}}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating the destination: %d %s", resp.StatusCode, out)
	}
	var dest destination
	if err := json.Unmarshal(out, &dest); err != nil {
		t.Fatal(err)
	}
	var subs []string
	for range 2 {
		sub, err := e.store.CreateSubscription(ctx, e.account, store.Subscription{Sources: []store.Source{{Type: tcpKind}}, DestinationIDs: []string{dest.ID}})
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub.ID)
	}
	// dl_1, dl_2: the first subscription's, permanent; dl_3, dl_4: its,
	// too_large; dl_5, dl_6: the second's, too_large.
	for i, class := range []string{"permanent", "permanent", "too_large", "too_large", "too_large", "too_large"} {
		id := schemas.NewID(schemas.PrefixEvent)
		e.deadLetterOf(t, subs[i/4], dest.ID, class, []byte(`{"event_id":"`+id+`"}`), id)
	}
	letters := "/event_destinations/" + dest.ID + "/dead_letters"
	listed := func(t *testing.T) []string {
		t.Helper()
		resp, out := e.call(t, e.token, http.MethodGet, letters, "")
		var page deadLetterPage
		if err := json.Unmarshal(out, &page); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", letters, resp.StatusCode, out)
		}
		var ids []string
		for _, d := range page.DeadLetters {
			ids = append(ids, d.ID)
		}
		return ids
	}
	other, err := e.store.CreateAccount(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := e.store.CreateAPIKey(ctx, other.ID, store.APIKeyInput{Description: "other"}, "")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("one", func(t *testing.T) {
		resp, out := e.call(t, e.token, http.MethodDelete, letters+"/dl_1", "")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE dl_1: %d %s", resp.StatusCode, out)
		}
		if got, want := listed(t), []string{"dl_6", "dl_5", "dl_4", "dl_3", "dl_2"}; !slices.Equal(got, want) {
			t.Fatalf("after deleting dl_1, listed %v, want %v", got, want)
		}
		for _, c := range []struct{ name, token, path string }{
			{"deleted already", e.token, letters + "/dl_1"},
			{"never stored", e.token, letters + "/dl_99"},
			{"not an id", e.token, letters + "/dl_x"},
			{"another account's", otherKey.Token, letters + "/dl_2"},
		} {
			resp, out := e.call(t, c.token, http.MethodDelete, c.path, "")
			if got := apitest.DecodeError(t, out); resp.StatusCode != http.StatusNotFound || got.ErrorCode != "ERR_SLUICE_420" || got.StatusCode != http.StatusNotFound {
				t.Errorf("DELETE %s (%s): %d %s, want 404 ERR_SLUICE_420", c.path, c.name, resp.StatusCode, out)
			}
		}
		if got := listed(t); len(got) != 5 {
			t.Fatalf("after deletes that found nothing, listed %v, want 5 letters", got)
		}
	})

	t.Run("bad filters", func(t *testing.T) {
		for _, c := range []struct{ token, body, code, field string }{
			{e.token, "", "ERR_SLUICE_330", ""},
			{e.token, `{"class":"big"}`, "ERR_SLUICE_333", "class"},
			{e.token, `{"subscription_id":"ed_1"}`, "ERR_SLUICE_333", "subscription_id"},
			{e.token, `{"event_id":""}`, "ERR_SLUICE_333", "event_id"},
			{e.token, `{"after_id":"5"}`, "ERR_SLUICE_333", "after_id"},
			{e.token, `{"filter":"obj.class == 'too_large'"}`, "ERR_SLUICE_331", ""},
			{otherKey.Token, `{}`, "ERR_SLUICE_420", ""},
		} {
			resp, out := e.call(t, c.token, http.MethodPost, letters+"/delete", c.body)
			got := apitest.DecodeError(t, out)
			if got.ErrorCode != c.code || (c.field != "" && got.Details["field"] != c.field) {
				t.Errorf("POST delete %s: %d %s, want %s on field %q", c.body, resp.StatusCode, out, c.code, c.field)
			}
		}
		if got := listed(t); len(got) != 5 {
			t.Fatalf("after bad deletes, listed %v, want 5 letters", got)
		}
	})

	deleted := func(t *testing.T, body string) (n, remaining int, next *string) {
		t.Helper()
		resp, out := e.call(t, e.token, http.MethodPost, letters+"/delete", body)
		var r struct {
			Deleted     int     `json:"deleted"`
			Remaining   int     `json:"remaining"`
			NextAfterID *string `json:"next_after_id"`
		}
		if err := json.Unmarshal(out, &r); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST delete %s: %d %s", body, resp.StatusCode, out)
		}
		return r.Deleted, r.Remaining, r.NextAfterID
	}

	t.Run("filtered", func(t *testing.T) {
		n, remaining, next := deleted(t, `{"subscription_id":"`+subs[0]+`","class":"too_large"}`)
		if n != 2 || remaining != 3 || next != nil {
			t.Fatalf("deleting the first subscription's too_large letters: %d deleted, %d remaining, next %v; want 2, 3, none", n, remaining, next)
		}
		if got, want := listed(t), []string{"dl_6", "dl_5", "dl_2"}; !slices.Equal(got, want) {
			t.Fatalf("left %v, want %v", got, want)
		}
		if n, remaining, _ := deleted(t, `{"class":"too_large","after_id":"dl_5"}`); n != 1 || remaining != 2 {
			t.Fatalf("deleting the too_large letters after dl_5: %d deleted, %d remaining; want 1, 2", n, remaining)
		}
	})

	t.Run("all", func(t *testing.T) {
		if n, remaining, next := deleted(t, `{}`); n != 2 || remaining != 0 || next != nil {
			t.Fatalf("deleting every letter: %d deleted, %d remaining, next %v; want 2, 0, none", n, remaining, next)
		}
		if got := listed(t); len(got) != 0 {
			t.Fatalf("after deleting every letter, listed %v", got)
		}
	})
}
