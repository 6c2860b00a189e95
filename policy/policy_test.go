package policy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pactum/pactum/task"
)

func TestStaticDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	s := NewStatic("v2", []Approval{
		{ID: "ok", Actions: []string{"deploy"}},
		{ID: "alice-only", Actions: []string{"*"}, Actors: []string{"alice"}},
		{ID: "old", Actions: []string{"*"}, Expires: now.Add(-time.Hour)},
		{ID: "gone", Actions: []string{"*"}, Revoked: true},
	})
	s.now = func() time.Time { return now }
	cases := []struct {
		name, policy, approval, action, actor string
		allow                                 bool
		reason                                string
	}{
		{"allowed", "v2", "ok", "deploy", "bob", true, ""},
		{"stale policy", "v1", "ok", "deploy", "bob", false, "not the current policy"},
		{"unknown approval", "v2", "nope", "deploy", "bob", false, "unknown"},
		{"revoked", "v2", "gone", "deploy", "bob", false, "revoked"},
		{"expired", "v2", "old", "deploy", "bob", false, "expired"},
		{"other action", "v2", "ok", "delete", "bob", false, "does not cover action"},
		{"actor listed", "v2", "alice-only", "delete", "alice", true, ""},
		{"actor not listed", "v2", "alice-only", "delete", "bob", false, "does not cover actor"},
	}
	for _, c := range cases {
		env := &task.Envelope{PolicyRef: c.policy, ApprovalRef: c.approval, Action: c.action, Actor: c.actor}
		d, err := s.Decide(context.Background(), task.PolicyInput{Envelope: env})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allow != c.allow || d.Version != "v2" || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: %+v", c.name, d)
		}
		if !d.Allow && d.Code != task.CodePolicyDenied {
			t.Errorf("%s: code %q", c.name, d.Code)
		}
	}
	// A revocation takes effect on the next decision.
	s.Replace("v2", []Approval{{ID: "ok", Actions: []string{"deploy"}, Revoked: true}})
	d, _ := s.Decide(context.Background(), task.PolicyInput{Envelope: &task.Envelope{PolicyRef: "v2", ApprovalRef: "ok", Action: "deploy"}})
	if d.Allow {
		t.Fatal("revoked approval still allowed")
	}
}

func TestCovers(t *testing.T) {
	t.Parallel()
	s := NewStatic("1", nil)
	if s.Covers("deploy") {
		t.Error("an engine without approvals covers deploy")
	}
	s.Replace("2", []Approval{{ID: "a", Actions: []string{"deploy"}, Revoked: true}})
	if !s.Covers("deploy") || s.Covers("drop") {
		t.Errorf("approval for deploy: Covers(deploy) %v, Covers(drop) %v; want true, false", s.Covers("deploy"), s.Covers("drop"))
	}
	s.Replace("3", []Approval{{ID: "b", Actions: []string{"*"}}})
	if !s.Covers("drop") {
		t.Error("an approval for * does not cover drop")
	}
}
