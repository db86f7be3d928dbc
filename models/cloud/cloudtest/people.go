package cloudtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Person is a Keystone user made for a test.
type Person struct {
	ID, Name, Password string
}

// EnsureProject creates the project name in the default domain (or finds
// it) and returns its id.
func (c *Cloud) EnsureProject(name string) (string, error) {
	var list struct {
		Projects []struct{ ID string } `json:"projects"`
	}
	if err := c.CallKeystone("GET", "projects?name="+url.QueryEscape(name), nil, &list, 200); err != nil {
		return "", err
	}
	if len(list.Projects) > 0 {
		return list.Projects[0].ID, nil
	}
	var made struct {
		Project struct{ ID string } `json:"project"`
	}
	err := c.CallKeystone("POST", "projects", map[string]any{"project": map[string]any{"name": name, "domain_id": "default"}}, &made, 201)
	return made.Project.ID, err
}

// AddPerson creates a user (enabled or not) with roles in projects:
// project name → role name (admin, member or reader).
func (c *Cloud) AddPerson(name, password string, enabled bool, roles map[string]string) (Person, error) {
	var made struct {
		User struct{ ID string } `json:"user"`
	}
	if err := c.CallKeystone("POST", "users", map[string]any{"user": map[string]any{
		"name": name, "password": password, "domain_id": "default", "enabled": enabled}}, &made, 201); err != nil {
		return Person{}, err
	}
	for project, role := range roles {
		pid, err := c.EnsureProject(project)
		if err != nil {
			return Person{}, err
		}
		var rl struct {
			Roles []struct{ ID string } `json:"roles"`
		}
		if err := c.CallKeystone("GET", "roles?name="+url.QueryEscape(role), nil, &rl, 200); err != nil {
			return Person{}, err
		}
		if len(rl.Roles) == 0 {
			return Person{}, fmt.Errorf("keystone has no role %q", role)
		}
		if err := c.CallKeystone("PUT", "projects/"+pid+"/users/"+made.User.ID+"/roles/"+rl.Roles[0].ID, nil, nil, 204); err != nil {
			return Person{}, err
		}
	}
	return Person{ID: made.User.ID, Name: name, Password: password}, nil
}

// PersonToken is a token of p scoped to project (by name).
func (c *Cloud) PersonToken(p Person, project string) (string, error) {
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": map[string]any{
			"name": p.Name, "domain": map[string]any{"id": "default"}, "password": p.Password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}}}}
	b, _ := json.Marshal(body)
	resp, err := http.Post(c.KeystoneURL+"/auth/tokens", "application/json", bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("keystone token of %s: %d %s", p.Name, resp.StatusCode, msg)
	}
	return resp.Header.Get("X-Subject-Token"), nil
}

// CloudsYAML is a clouds.yaml naming this cloud "corral-ks" with the
// bootstrap admin as corral's service identity.
func (c *Cloud) CloudsYAML() string {
	return fmt.Sprintf(`clouds:
  corral-ks:
    auth:
      auth_url: %s
      username: admin
      password: %s
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
`, c.KeystoneURL, c.AdminPassword)
}

// StartKeystoneOnly starts a Keystone of its own under dir, without Nova
// or Placement (another cloud's identity service, for tokens it must not
// accept). Stop ends it.
func StartKeystoneOnly(dir string) (*Cloud, error) {
	kp, err := freePort()
	if err != nil {
		return nil, err
	}
	c := &Cloud{Dir: dir, AdminPassword: newUUID(), KeystoneURL: fmt.Sprintf("http://127.0.0.1:%d/v3", kp)}
	cmd := exec.Command("bash", filepath.Join(filepath.Dir(script()), "keystone.sh"), dir, strconv.Itoa(kp))
	cmd.Env = append(os.Environ(), "KEYSTONE_ADMIN_PASSWORD="+c.AdminPassword)
	out, err := cmd.CombinedOutput()
	c.readPids("keystone.pid")
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("starting keystone: %v\n%s", err, out)
	}
	if c.AdminToken, err = c.token(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}
