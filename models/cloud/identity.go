package cloud

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"corral/models"
)

// Identity is the cloud's Keystone as corral's doors use it: people sign in
// with their Keystone name and password, and API calls carry Keystone
// tokens, which it validates with corral's own (service) token.
type Identity struct {
	authURL string // …/v3/, as clouds.yaml gives it (credentials removed)
	region  string
	service *gophercloud.ServiceClient // Keystone, as corral's service identity
	http    gophercloud.ProviderClient // unauthenticated: a person's own calls
	// TTL bounds how long a validated token is trusted without asking
	// Keystone again: a token revoked elsewhere is refused within it.
	TTL time.Duration
	// Now is the clock (tests move it); nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	cache    map[[32]byte]cachedPerson
	projects projectNames
}

type cachedPerson struct {
	person  models.Person
	checked time.Time
}

// maxCachedTokens bounds the validation cache; when full it starts over.
const maxCachedTokens = 10000

// DefaultTokenCacheTTL is how long a validated token is trusted.
const DefaultTokenCacheTTL = 30 * time.Second

// KeystoneAuthURL is the auth_url of the clouds.yaml cloud o names, or ""
// when o reaches no Keystone (URL flags, or a cloud without auth_url).
func KeystoneAuthURL(o Options) string {
	o = o.resolved()
	if o.Cloud == "" {
		return ""
	}
	ao, _, _, err := clouds.Parse(o.parseOptions()...)
	if err != nil {
		return ""
	}
	return ao.IdentityEndpoint
}

// NewIdentity signs corral's service identity in to the Keystone of the
// clouds.yaml cloud o names. It returns nil, nil when o reaches no
// Keystone.
func NewIdentity(ctx context.Context, o Options) (*Identity, error) {
	o = o.resolved()
	if KeystoneAuthURL(o) == "" {
		return nil, nil
	}
	ao, eo, tlsConf, err := clouds.Parse(o.parseOptions()...)
	if err != nil {
		return nil, models.E(models.Invalid, "os-cloud", "clouds.yaml: %v", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf
	}
	hc := http.Client{Timeout: 30 * time.Second, Transport: tr}
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	ao.AllowReauth = ao.Password != "" || ao.ApplicationCredentialSecret != ""
	pc, err := config.NewProviderClient(ctx, ao, config.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("keystone %s refused the credentials of cloud %s: %s", RedactURL(ao.IdentityEndpoint), o.Cloud, answerOf(err))
	}
	base := v3Endpoint(ao.IdentityEndpoint)
	id := &Identity{
		authURL: base,
		region:  eo.Region,
		service: &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: base, Type: "identity"},
		http:    gophercloud.ProviderClient{HTTPClient: hc},
		TTL:     DefaultTokenCacheTTL,
	}
	return id, nil
}

// v3Endpoint is Keystone's v3 API below auth_url, ending in a slash.
func v3Endpoint(authURL string) string {
	u := strings.TrimRight(authURL, "/")
	if !strings.HasSuffix(u, "/v3") {
		u += "/v3"
	}
	return u + "/"
}

// AuthURL is the Keystone URL clients authenticate at (for the
// WWW-Authenticate header of a 401), without credentials.
func (id *Identity) AuthURL() string { return RedactURL(strings.TrimSuffix(id.authURL, "/")) }

// Region is the region corral governs ("" when clouds.yaml names none).
func (id *Identity) Region() string { return id.region }

func (id *Identity) now() time.Time {
	if id.Now != nil {
		return id.Now()
	}
	return time.Now()
}

// personClient is Keystone as the person holding token (none: anonymous).
func (id *Identity) personClient(token string) *gophercloud.ServiceClient {
	pc := &gophercloud.ProviderClient{HTTPClient: id.http.HTTPClient}
	if token != "" {
		pc.SetToken(token)
	}
	return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: id.authURL, Type: "identity"}
}

// tokenBody is what Keystone says of a token (POST and GET /v3/auth/tokens).
type tokenBody struct {
	Token struct {
		ExpiresAt time.Time `json:"expires_at"`
		User      struct {
			ID, Name string
			Domain   struct{ ID, Name string }
		} `json:"user"`
		Project *struct{ ID, Name string }  `json:"project"`
		Roles   []struct{ ID, Name string } `json:"roles"`
	} `json:"token"`
}

func (b *tokenBody) person(token string) *models.Person {
	p := &models.Person{Token: token, UserID: b.Token.User.ID, UserName: b.Token.User.Name,
		DomainName: b.Token.User.Domain.Name, ExpiresAt: b.Token.ExpiresAt}
	if b.Token.Project != nil {
		p.ProjectID, p.ProjectName = b.Token.Project.ID, b.Token.Project.Name
	}
	for _, r := range b.Token.Roles {
		p.Roles = append(p.Roles, strings.ToLower(r.Name))
	}
	return p
}

// keystoneError turns a failed Keystone call into a corral error: a
// refusal is Unauthorized, no answer is Unavailable (the sign-in page says
// so instead of failing).
func (id *Identity) keystoneError(err error, refused string) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		switch {
		case ue.Actual == http.StatusUnauthorized || ue.Actual == http.StatusNotFound || ue.Actual == http.StatusForbidden:
			return models.E(models.Unauthorized, "", "%s", refused)
		case ue.Actual >= 500:
			return models.E(models.Unavailable, "", "Keystone at %s failed (%d): try again later", id.AuthURL(), ue.Actual)
		}
		return models.E(models.Unauthorized, "", "%s (Keystone answered %d)", refused, ue.Actual)
	}
	return models.E(models.Unavailable, "", "Keystone at %s did not answer: %s", id.AuthURL(), clip(RedactText(err.Error())))
}

// SignIn checks a name and password with Keystone (domain "" is Default)
// and returns the person's token, scoped to their default project if they
// have one, and the projects they may choose from.
func (id *Identity) SignIn(ctx context.Context, domain, name, password string) (*models.Person, []models.ProjectRef, error) {
	if domain == "" {
		domain = "Default"
	}
	ao := &tokens.AuthOptions{Username: name, Password: password, DomainName: domain}
	res := tokens.Create(ctx, id.personClient(""), ao)
	if res.Err != nil {
		return nil, nil, id.keystoneError(res.Err, "wrong user name, password or domain")
	}
	var b tokenBody
	if err := res.Result.ExtractInto(&b); err != nil {
		return nil, nil, models.E(models.Unavailable, "", "Keystone answered something unreadable: %v", err)
	}
	p := b.person(res.Header.Get("X-Subject-Token"))
	list, err := id.Projects(ctx, p.Token)
	if err != nil {
		return nil, nil, err
	}
	return p, list, nil
}

// Projects are the projects the token's user may scope a token to, by name.
func (id *Identity) Projects(ctx context.Context, token string) ([]models.ProjectRef, error) {
	pages, err := projects.ListAvailable(id.personClient(token)).AllPages(ctx)
	if err != nil {
		return nil, id.keystoneError(err, "Keystone refused to list your projects")
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil {
		return nil, models.E(models.Unavailable, "", "Keystone answered something unreadable: %v", err)
	}
	var out []models.ProjectRef
	for _, pr := range all {
		if pr.Enabled {
			out = append(out, models.ProjectRef{ID: pr.ID, Name: pr.Name})
		}
	}
	slices.SortFunc(out, func(a, b models.ProjectRef) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Scope is a new token of the same person scoped to project (Keystone's
// token method, as Horizon switches projects).
func (id *Identity) Scope(ctx context.Context, token, projectID string) (*models.Person, error) {
	ao := &tokens.AuthOptions{TokenID: token, Scope: tokens.Scope{ProjectID: projectID}}
	res := tokens.Create(ctx, id.personClient(""), ao)
	if res.Err != nil {
		return nil, id.keystoneError(res.Err, "Keystone refused that project")
	}
	var b tokenBody
	if err := res.Result.ExtractInto(&b); err != nil {
		return nil, models.E(models.Unavailable, "", "Keystone answered something unreadable: %v", err)
	}
	return b.person(res.Header.Get("X-Subject-Token")), nil
}

func tokenKey(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// Validate is who token stands for, asked of Keystone (GET /v3/auth/tokens
// with corral's service token) at most once per TTL; an expired, revoked
// or foreign token is Unauthorized.
func (id *Identity) Validate(ctx context.Context, token string) (*models.Person, error) {
	if token == "" || len(token) > 8192 {
		return nil, models.E(models.Unauthorized, "", "the token is not valid")
	}
	key, now := tokenKey(token), id.now()
	id.mu.Lock()
	cp, ok := id.cache[key]
	id.mu.Unlock()
	if ok && now.Sub(cp.checked) < id.TTL && now.Before(cp.person.ExpiresAt) {
		p := cp.person
		return &p, nil
	}
	res := tokens.Get(ctx, id.service, token)
	if res.Err != nil {
		id.forget(token)
		return nil, id.keystoneError(res.Err, "the token is unknown to Keystone, expired or revoked")
	}
	var b tokenBody
	if err := res.Result.ExtractInto(&b); err != nil {
		return nil, models.E(models.Unavailable, "", "Keystone answered something unreadable: %v", err)
	}
	p := b.person(token)
	if !now.Before(p.ExpiresAt) {
		return nil, models.E(models.Unauthorized, "", "the token expired")
	}
	id.mu.Lock()
	if id.cache == nil || len(id.cache) >= maxCachedTokens {
		id.cache = map[[32]byte]cachedPerson{}
	}
	id.cache[key] = cachedPerson{person: *p, checked: now}
	id.mu.Unlock()
	return p, nil
}

func (id *Identity) forget(token string) {
	id.mu.Lock()
	delete(id.cache, tokenKey(token))
	id.mu.Unlock()
}

// Revoke ends token at Keystone (signing out) and forgets it here at once.
func (id *Identity) Revoke(ctx context.Context, token string) error {
	id.forget(token)
	res := tokens.Revoke(ctx, id.personClient(token), token)
	if res.Err != nil {
		var ue gophercloud.ErrUnexpectedResponseCode
		if errors.As(res.Err, &ue) && (ue.Actual == http.StatusNotFound || ue.Actual == http.StatusUnauthorized) {
			return nil // already gone
		}
		return id.keystoneError(res.Err, "Keystone refused to revoke the token")
	}
	return nil
}

// projectNamesTTL is how long the project names stay before they are read
// again from Keystone.
const projectNamesTTL = 5 * time.Minute

type projectNames struct {
	mu    sync.Mutex
	names map[string]string
	read  time.Time
}

// ProjectNames are the cloud's projects' names by id, read from Keystone
// with corral's own token and kept for a few minutes; nil when Keystone
// does not answer (pages then show ids).
func (id *Identity) ProjectNames(ctx context.Context) map[string]string {
	id.projects.mu.Lock()
	defer id.projects.mu.Unlock()
	now := id.now()
	if id.projects.names != nil && now.Sub(id.projects.read) < projectNamesTTL {
		return id.projects.names
	}
	pages, err := projects.List(id.service, projects.ListOpts{}).AllPages(ctx)
	if err != nil {
		return id.projects.names
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil {
		return id.projects.names
	}
	names := make(map[string]string, len(all))
	for _, p := range all {
		names[p.ID] = p.Name
	}
	id.projects.names, id.projects.read = names, now
	return names
}
