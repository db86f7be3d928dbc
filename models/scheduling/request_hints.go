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

// ServerUUIDs finds servers by uuid or by name, in one pass over the
// servers, for the pages' hint fields. A name two servers share is
// refused, naming both; a uuid corral does not know is kept (it runs
// nowhere, as for Nova).
func (s *Snapshot) ServerUUIDs(refs []string) ([]string, error) {
	byName := map[string][]string{}
	for _, ref := range refs {
		if _, ok := s.serverByUUID[ref]; !ok {
			byName[ref] = nil
		}
	}
	if len(byName) > 0 {
		for _, srv := range s.world.Servers {
			if found, wanted := byName[srv.Name]; wanted {
				byName[srv.Name] = append(found, srv.UUID)
			}
		}
	}
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		found, named := byName[ref]
		switch {
		case !named || len(found) == 0 && models.ValidUUID(ref):
			out = append(out, ref)
		case len(found) == 0:
			return nil, models.E(models.Invalid, "server", "no server named %q", ref)
		case len(found) == 1:
			out = append(out, found[0])
		default:
			return nil, models.E(models.Invalid, "server", "%d servers are named %q (%s): give a uuid", len(found), ref, strings.Join(found, ", "))
		}
	}
	return out, nil
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
