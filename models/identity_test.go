package models

import (
	"context"
	"testing"
)

// A Keystone token's roles give the corral role as Nova's default
// policies read them: the strongest of admin, member and reader; others
// give none.
func TestPersonRoleFromKeystoneRoles(t *testing.T) {
	for _, c := range []struct {
		roles []string
		want  Role
	}{
		{[]string{"reader", "member", "admin"}, RoleAdmin},
		{[]string{"reader", "member"}, RoleMember},
		{[]string{"reader"}, RoleReader},
		{[]string{"load-balancer_member", "heat_stack_owner"}, ""},
		{nil, ""},
	} {
		p := &Person{Roles: c.roles, ProjectID: "p1", UserName: "u"}
		if got := p.Role(); got != c.want {
			t.Errorf("roles %v: %q, want %q", c.roles, got, c.want)
		}
		if u := p.AsUser(); u.Role != c.want || u.ProjectID != "p1" || u.Name != "u" || u.ID != 0 {
			t.Errorf("roles %v: as user %+v", c.roles, u)
		}
	}
}

// The person's token rides on the context until a sync takes it off.
func TestPersonTokenOnTheContext(t *testing.T) {
	ctx := context.Background()
	if PersonToken(ctx) != "" || PersonToken(WithPersonIn(ctx, "", "")) != "" {
		t.Error("a token out of nowhere")
	}
	as := WithPersonIn(ctx, "tok", "")
	if PersonToken(as) != "tok" {
		t.Error("the token is lost")
	}
	if PersonToken(WithoutPersonToken(as)) != "" {
		t.Error("a sync would still act as the person")
	}
	in := WithPersonIn(ctx, "tok", "p1")
	if PersonToken(in) != "tok" || PersonProject(in) != "p1" || PersonProject(as) != "" {
		t.Errorf("the person's project: %q with it, %q without", PersonProject(in), PersonProject(as))
	}
	if out := WithoutPersonToken(in); PersonToken(out) != "" || PersonProject(out) != "" {
		t.Error("a sync would still act in the person's project")
	}
}
