package scheduling

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"corral/models"
	"corral/models/placement"
)

// RequestSpec is one request as a person or script writes it (FORMATS.md,
// "Request"): references by name, raw Placement terms, settings overrides.
// Snapshot.Run resolves it against a world.
type RequestSpec struct {
	ProjectID        string    `json:"project_id,omitempty"`
	UserID           string    `json:"user_id,omitempty"`
	Flavor           FlavorRef `json:"flavor,omitzero"`
	AvailabilityZone string    `json:"availability_zone,omitempty"`
	ServerGroup      string    `json:"server_group,omitempty"`
	NumInstances     int       `json:"num_instances,omitempty"`
	// Image is the image booted, by the properties scheduling reads.
	Image *ImageSpec `json:"image,omitempty"`
	// IsBFV is a boot from volume: Nova asks no DISK_GB for the root disk.
	IsBFV bool `json:"is_bfv,omitempty"`
	// SchedulerHints are the boot's same_host and different_host hints.
	SchedulerHints *SchedulerHints   `json:"scheduler_hints,omitempty"`
	Placement      PlacementSpec     `json:"placement,omitzero"`
	Settings       *SettingsOverride `json:"settings,omitempty"`
	// Limit caps the providers and hosts listed in the trace; 0 lists all.
	Limit int `json:"limit,omitempty"`
	// Hosts chooses which hosts the trace lists, for a page that shows
	// them a screenful at a time; nil lists them all (up to Limit).
	Hosts *HostSelect `json:"-"`
}

// HostSelect picks hosts for the trace's list: those matching every set
// field, then Offset of them skipped. The trace's HostsMatched counts the
// matches, so that a page knows how many pages there are.
type HostSelect struct {
	Offset int
	// Limit caps the hosts listed, instead of the request's Limit.
	Limit int
	// FailedOnly keeps the hosts some stage excluded.
	FailedOnly bool
	// Stage keeps the hosts whose first failing stage it is.
	Stage string
	// Name keeps the hosts whose name contains it.
	Name string
}

// FlavorRef is a flavor of the world by name (or flavor id), or an inline
// ad-hoc flavor. The zero value means "no flavor": an empty ad-hoc one.
type FlavorRef struct {
	Name   string
	Inline *models.Flavor
}

// IsZero reports whether no flavor was given.
func (f FlavorRef) IsZero() bool { return f.Name == "" && f.Inline == nil }

// MarshalJSON writes the name as a string, or the inline flavor as an object.
func (f FlavorRef) MarshalJSON() ([]byte, error) {
	if f.Inline != nil {
		return json.Marshal(inlineFlavor{Name: f.Inline.Name, VCPUs: f.Inline.VCPUs, RAMMB: f.Inline.RAMMB,
			DiskGB: f.Inline.DiskGB, ExtraSpecs: f.Inline.ExtraSpecs})
	}
	return json.Marshal(f.Name)
}

type inlineFlavor struct {
	Name       string            `json:"name,omitempty"`
	VCPUs      int               `json:"vcpus"`
	RAMMB      int               `json:"ram_mb"`
	DiskGB     int               `json:"disk_gb"`
	ExtraSpecs map[string]string `json:"extra_specs"`
}

// ImageSpec is an image as scheduling reads it: its properties
// (trait:<T>=required, hw_cpu_policy, …).
type ImageSpec struct {
	Properties map[string]string `json:"properties"`
}

// maxImageProperties bounds an inline image (Glance allows 128).
const maxImageProperties = 256

// PlacementSpec holds raw Placement terms, AND-ed to what the request
// filters produce. Aggregates may be given by UUID or by name.
type PlacementSpec struct {
	MemberOf []string `json:"member_of,omitempty"`
	// Groups are numbered (granular) groups by suffix.
	Groups map[string]GroupSpec `json:"groups,omitempty"`
}

// GroupSpec is one numbered group's raw terms.
type GroupSpec struct {
	MemberOf []string `json:"member_of"`
}

// requestDoc is the wire shape, with flavor and groups kept raw so that
// their errors can name the exact field.
type requestDoc struct {
	ProjectID        string          `json:"project_id"`
	UserID           string          `json:"user_id"`
	Flavor           json.RawMessage `json:"flavor"`
	AvailabilityZone string          `json:"availability_zone"`
	ServerGroup      string          `json:"server_group"`
	NumInstances     *int            `json:"num_instances"`
	Image            *ImageSpec      `json:"image"`
	IsBFV            bool            `json:"is_bfv"`
	SchedulerHints   json.RawMessage `json:"scheduler_hints"`
	Placement        json.RawMessage `json:"placement"`
	Settings         json.RawMessage `json:"settings"`
	Limit            *int            `json:"limit"`
}

type placementDoc struct {
	MemberOf []string                   `json:"member_of"`
	Groups   map[string]json.RawMessage `json:"groups"`
}

// DecodeRequestJSON is DecodeRequest over bytes, with field paths under
// path (e.g. "request" inside a preview document).
func DecodeRequestJSON(data []byte, path string) (*RequestSpec, error) {
	var doc requestDoc
	if err := models.DecodeStrict(data, path, &doc); err != nil {
		return nil, err
	}
	spec := &RequestSpec{ProjectID: doc.ProjectID, UserID: doc.UserID, AvailabilityZone: doc.AvailabilityZone,
		ServerGroup: doc.ServerGroup, NumInstances: 1, Image: doc.Image, IsBFV: doc.IsBFV}
	if doc.Image != nil && len(doc.Image.Properties) > maxImageProperties {
		return nil, models.E(models.Invalid, models.JoinPath(path, "image.properties"), "at most %d properties, got %d", maxImageProperties, len(doc.Image.Properties))
	}
	hints, err := decodeHints(doc.SchedulerHints, models.JoinPath(path, "scheduler_hints"))
	if err != nil {
		return nil, err
	}
	spec.SchedulerHints = hints
	if doc.NumInstances != nil {
		if *doc.NumInstances < 1 {
			return nil, models.E(models.Invalid, models.JoinPath(path, "num_instances"), "must be at least 1, got %d", *doc.NumInstances)
		}
		spec.NumInstances = *doc.NumInstances
	}
	if doc.Limit != nil {
		if *doc.Limit < 0 {
			return nil, models.E(models.Invalid, models.JoinPath(path, "limit"), "must not be negative, got %d", *doc.Limit)
		}
		spec.Limit = *doc.Limit
	}
	if f := bytes.TrimSpace(doc.Flavor); len(f) > 0 && string(f) != "null" {
		fp := models.JoinPath(path, "flavor")
		switch f[0] {
		case '"':
			if err := json.Unmarshal(f, &spec.Flavor.Name); err != nil {
				return nil, models.JSONError(fp, err)
			}
			if spec.Flavor.Name == "" {
				return nil, models.E(models.Invalid, fp, "flavor name must not be empty")
			}
		case '{':
			var in inlineFlavor
			if err := models.DecodeStrict(f, fp, &in); err != nil {
				return nil, err
			}
			if in.VCPUs < 0 || in.RAMMB < 0 || in.DiskGB < 0 {
				return nil, models.E(models.Invalid, fp, "vcpus, ram_mb and disk_gb must not be negative")
			}
			if in.ExtraSpecs == nil {
				in.ExtraSpecs = map[string]string{}
			}
			spec.Flavor.Inline = &models.Flavor{Name: in.Name, VCPUs: in.VCPUs, RAMMB: in.RAMMB, DiskGB: in.DiskGB, ExtraSpecs: in.ExtraSpecs}
		default:
			return nil, models.E(models.Invalid, fp, "expected a flavor name or an object")
		}
	}
	if p := bytes.TrimSpace(doc.Placement); len(p) > 0 && string(p) != "null" {
		pp := models.JoinPath(path, "placement")
		var pd placementDoc
		if err := models.DecodeStrict(p, pp, &pd); err != nil {
			return nil, err
		}
		spec.Placement.MemberOf = pd.MemberOf
		if len(pd.Groups) > 0 {
			spec.Placement.Groups = map[string]GroupSpec{}
			for _, k := range slices.Sorted(maps.Keys(pd.Groups)) {
				gp := models.JoinPath(pp, "groups."+k)
				if _, ok := placement.SplitKey("member_of" + k); !ok || k == "" {
					return nil, models.E(models.Invalid, gp, "group suffix must be 1-64 of [a-zA-Z0-9_-]")
				}
				var g GroupSpec
				if err := models.DecodeStrict(pd.Groups[k], gp, &g); err != nil {
					return nil, err
				}
				spec.Placement.Groups[k] = g
			}
		}
	}
	if s := bytes.TrimSpace(doc.Settings); len(s) > 0 && string(s) != "null" {
		spec.Settings = &SettingsOverride{}
		if err := models.DecodeStrict(s, models.JoinPath(path, "settings"), spec.Settings); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// resolved is a RequestSpec checked against a snapshot.
type resolved struct {
	req      Request
	filters  []HostFilter
	weighers []Weigher
	user     placement.Terms            // the request's raw unnumbered terms
	groups   map[string]placement.Terms // numbered groups by suffix
	// refused is Nova's refusal of the request before any scheduling (a
	// private flavor the project may not use): the preview reports it,
	// the impact matrix counts no host.
	refused error
}

// resolve checks every reference of spec against the snapshot. Errors are
// Invalid and name the field (flavor, server_group, placement.member_of…).
func (s *Snapshot) resolve(spec *RequestSpec) (*resolved, error) {
	if spec == nil {
		spec = &RequestSpec{}
	}
	settings := spec.Settings.Apply(s.world.Settings)
	rv := &resolved{groups: map[string]placement.Terms{}}
	for i, name := range settings.EnabledFilters {
		f, ok := LookupHostFilter(name)
		if !ok && slices.Contains(models.NotModelledFilters, name) {
			f, ok = notModelledFilter{name}, true
		}
		if !ok {
			return nil, models.E(models.Invalid, fmt.Sprintf("settings.enabled_filters[%d]", i), "unknown host filter %q", name)
		}
		rv.filters = append(rv.filters, f)
	}
	rv.weighers = WeighersFor(settings)

	flavor := &models.Flavor{ExtraSpecs: map[string]string{}}
	switch {
	case spec.Flavor.Inline != nil:
		flavor = spec.Flavor.Inline
		if flavor.ExtraSpecs == nil {
			c := *flavor
			c.ExtraSpecs = map[string]string{}
			flavor = &c
		}
	case spec.Flavor.Name != "":
		f, ok := s.Flavor(spec.Flavor.Name)
		if !ok {
			return nil, models.E(models.Invalid, "flavor", "no flavor named %q", spec.Flavor.Name)
		}
		if spec.ProjectID != "" && !f.UsableBy(spec.ProjectID) {
			// Nova looks private flavors up through their access list and
			// answers "Invalid flavorRef provided." (400) to the others.
			rv.refused = models.E(models.Invalid, "flavor", "flavor %q is private and project %q is not in its access list: nova refuses the request (400 Invalid flavorRef provided.)", f.Name, spec.ProjectID)
		}
		flavor = f
	}
	var group *models.ServerGroup
	if spec.ServerGroup != "" {
		g, err := s.ServerGroup(spec.ServerGroup, spec.ProjectID)
		if err != nil {
			return nil, err
		}
		group = g
	}
	n := spec.NumInstances
	if n < 1 {
		n = 1
	}
	rv.req = Request{
		ProjectID: spec.ProjectID, UserID: spec.UserID, Flavor: flavor, AvailabilityZone: spec.AvailabilityZone,
		Group: group, NumInstances: n, GroupHosts: s.GroupHosts(group), Settings: settings, IsBFV: spec.IsBFV,
	}
	if spec.Image != nil {
		rv.req.Image = spec.Image.Properties
	}
	if h := spec.SchedulerHints; h != nil {
		rv.req.SameHost, rv.req.DifferentHost = s.hintHosts(h.SameHost), s.hintHosts(h.DifferentHost)
	}
	if len(spec.Placement.MemberOf) > 0 {
		t, err := s.ResolveMemberOf("member_of", "placement.member_of", spec.Placement.MemberOf)
		if err != nil {
			return nil, err
		}
		rv.user = t
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Placement.Groups)) {
		field := "placement.groups." + k + ".member_of"
		if _, ok := placement.SplitKey("member_of" + k); !ok || k == "" {
			return nil, models.E(models.Invalid, "placement.groups."+k, "group suffix must be 1-64 of [a-zA-Z0-9_-]")
		}
		t, err := s.ResolveMemberOf("member_of"+k, field, spec.Placement.Groups[k].MemberOf)
		if err != nil {
			return nil, err
		}
		rv.groups[k] = t
	}
	return rv, nil
}
