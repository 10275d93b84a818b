package pipeline_test

import (
	"errors"
	"testing"

	"github.com/sluicehq/sluice/pipeline"
)

// TestDeleteDeadLetters deletes a dead letter: it is gone from the list
// and from events_dead_lettered, deleting it again or as another account
// finds nothing, and its event, failing again in a replay, is
// dead-lettered again. A delete filtered by class removes only the
// letters of that class; one with no filter, the rest.
func TestDeleteDeadLetters(t *testing.T) {
	r := newRefusingEnv(t)
	dlq, err := r.js.Stream(r.ctx, pipeline.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	letters := pipeline.NewDeadLetters(r.js, dlq)
	page, _, err := letters.List(r.ctx, r.account, r.dest.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 {
		t.Fatalf("%d dead letters listed, want 2", len(page))
	}
	refused, large := page[0], page[1]
	if refused.EventID != r.events[3] {
		refused, large = large, refused
	}
	if err := letters.Delete(r.ctx, r.account, r.dest.ID, refused.Seq); err != nil {
		t.Fatal(err)
	}
	r.wantHeld(t, "after a delete", 1)
	if err := letters.Delete(r.ctx, r.account, r.dest.ID, refused.Seq); !errors.Is(err, pipeline.ErrDeadLetterNotFound) {
		t.Fatalf("deleting %s again: %v, want ErrDeadLetterNotFound", refused.ID(), err)
	}
	if err := letters.Delete(r.ctx, "ac_other", r.dest.ID, large.Seq); !errors.Is(err, pipeline.ErrDeadLetterNotFound) {
		t.Fatalf("deleting a letter as another account: %v, want ErrDeadLetterNotFound", err)
	}
	r.wantHeld(t, "after deletes that found nothing", 1)
	r.replay(t)
	r.wantHeld(t, "after a replay that failed the deleted letter's event again", 2)

	report, err := letters.DeleteMatching(r.ctx, r.account, r.dest.ID, pipeline.DeadLetterFilter{Class: "too_large"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if report.Deleted != 1 || report.Remaining != 1 || report.Next != 0 {
		t.Fatalf("deleting the too_large letters: %+v, want 1 deleted, 1 remaining, no next", report)
	}
	page, _, err = letters.List(r.ctx, r.account, r.dest.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 1 || page[0].Class != "permanent" || page[0].EventID != r.events[3] {
		t.Fatalf("after deleting the too_large letters, %+v is left, want the permanent letter of %s", page, r.events[3])
	}
	report, err = letters.DeleteMatching(r.ctx, r.account, r.dest.ID, pipeline.DeadLetterFilter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if report.Deleted != 1 || report.Remaining != 0 {
		t.Fatalf("deleting every letter: %+v, want 1 deleted, none remaining", report)
	}
	r.wantHeld(t, "after deleting them all", 0)
}
