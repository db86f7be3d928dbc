package scheduling

import (
	"bytes"
	"encoding/json"
	"strings"

	"corral/models"
)

// SchedulerHints are the scheduler hints of a boot request that corral's
// filters read (os:scheduler_hints): same_host and different_host name
// servers by uuid, as Nova's API takes them (one uuid or a list). A group
// is the request's server_group.
type SchedulerHints struct {
	SameHost      []string `json:"same_host,omitempty"`
	DifferentHost []string `json:"different_host,omitempty"`
}

// maxHintServers bounds the servers one hint names.
const maxHintServers = 1000

type hintsDoc struct {
	SameHost      json.RawMessage `json:"same_host"`
	DifferentHost json.RawMessage `json:"different_host"`
}

// decodeHints reads scheduler_hints: each hint a uuid or a list of them.
func decodeHints(raw json.RawMessage, path string) (*SchedulerHints, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var doc hintsDoc
	if err := models.DecodeStrict(raw, path, &doc); err != nil {
		return nil, err
	}
	var h SchedulerHints
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  *[]string
	}{{"same_host", doc.SameHost, &h.SameHost}, {"different_host", doc.DifferentHost, &h.DifferentHost}} {
		fp := models.JoinPath(path, f.name)
		v := bytes.TrimSpace(f.raw)
		switch {
		case len(v) == 0 || string(v) == "null":
			continue
		case v[0] == '"':
			var one string
			if err := json.Unmarshal(v, &one); err != nil {
				return nil, models.JSONError(fp, err)
			}
			*f.dst = []string{one}
		default:
			if err := json.Unmarshal(v, f.dst); err != nil {
				return nil, models.E(models.Invalid, fp, "expected a server uuid or a list of them")
			}
		}
		if len(*f.dst) > maxHintServers {
			return nil, models.E(models.Invalid, fp, "at most %d servers, got %d", maxHintServers, len(*f.dst))
		}
		for _, u := range *f.dst {
			if !models.ValidUUID(u) {
				return nil, models.E(models.Invalid, fp, "%q is not a server uuid", u)
			}
		}
	}
	return &h, nil
}

// ServerUUID finds a server by uuid or by name (a name two servers share
// is refused, naming both), for the pages' hint fields.
func (s *Snapshot) ServerUUID(ref string) (string, error) {
	if srv, ok := s.serverByUUID[ref]; ok {
		return srv.UUID, nil
	}
	var found []string
	for _, srv := range s.world.Servers {
		if srv.Name == ref {
			found = append(found, srv.UUID)
		}
	}
	switch len(found) {
	case 0:
		if models.ValidUUID(ref) {
			return ref, nil // a server corral does not know runs nowhere, as for Nova
		}
		return "", models.E(models.Invalid, "server", "no server named %q", ref)
	case 1:
		return found[0], nil
	}
	return "", models.E(models.Invalid, "server", "%d servers are named %q (%s): give a uuid", len(found), ref, strings.Join(found, ", "))
}

// hintHosts maps each host to the servers of uuids it runs, by name (the
// uuid when a server has none): what SameHostFilter and
// DifferentHostFilter read. A uuid corral does not know runs nowhere, as
// an instance Nova's host states do not hold.
func (s *Snapshot) hintHosts(uuids []string) map[string][]string {
	if len(uuids) == 0 {
		return nil
	}
	out := map[string][]string{} // not nil: the hint was given
	for _, u := range uuids {
		srv, ok := s.serverByUUID[u]
		if !ok || srv.Host == "" {
			continue
		}
		name := srv.Name
		if name == "" {
			name = srv.UUID
		}
		out[srv.Host] = append(out[srv.Host], name)
	}
	return out
}
