package models

import (
	"context"
	"time"
)

// Person is someone signed in through the cloud's Keystone: who they are,
// the project their token is scoped to and what that token lets them do.
// The token itself is never stored; it lives in the person's session
// cookie (encrypted) or comes with each API call.
type Person struct {
	Token       string `json:"-"`
	UserID      string
	UserName    string
	DomainName  string
	ProjectID   string // "" for a token scoped to no project yet
	ProjectName string
	Roles       []string // every role the token carries, implied ones included
	ExpiresAt   time.Time
}

// Role is the corral role the token's Keystone roles give, following
// Nova's and Placement's default policies (admin, then member, then
// reader); "" when the token carries none of the three.
func (p *Person) Role() Role {
	best := Role("")
	for _, r := range p.Roles {
		if cand := Role(r); cand.Valid() && (best == "" || cand.rank() > best.rank()) {
			best = cand
		}
	}
	return best
}

// AsUser is the person as the console and the API doors see a user:
// the Keystone user's name, the token's project and role. The id is 0:
// there is no row of corral's users behind it.
func (p *Person) AsUser() *User {
	return &User{Name: p.UserName, Role: p.Role(), ProjectID: p.ProjectID}
}

// ProjectRef is a project someone may sign in to.
type ProjectRef struct {
	ID, Name string
}

type personTokenKey struct{}

// personOnCtx is what WithPersonIn puts on a context.
type personOnCtx struct{ token, project string }

// WithPersonIn is ctx carrying the token of the person a request acts for,
// and the project it is scoped to: the cloud client sends the token
// instead of corral's own identity, and Nova creates what the person
// creates (a server group) in that project.
func WithPersonIn(ctx context.Context, token, project string) context.Context {
	if token == "" {
		return ctx
	}
	return context.WithValue(ctx, personTokenKey{}, personOnCtx{token, project})
}

// WithoutPersonToken is ctx acting as corral itself again (a sync).
func WithoutPersonToken(ctx context.Context) context.Context {
	if PersonToken(ctx) == "" {
		return ctx
	}
	return context.WithValue(ctx, personTokenKey{}, personOnCtx{})
}

// PersonToken is the token WithPersonIn put on ctx, or "".
func PersonToken(ctx context.Context) string {
	p, _ := ctx.Value(personTokenKey{}).(personOnCtx)
	return p.token
}

// PersonProject is the project of the person's token on ctx, or "" (no
// person, or a project not given).
func PersonProject(ctx context.Context) string {
	p, _ := ctx.Value(personTokenKey{}).(personOnCtx)
	return p.project
}
