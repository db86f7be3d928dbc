// Package console holds the templ pages for the objects an admin manages:
// aggregates (with their metadata, tenant and reservation tags and
// members), resource providers, flavors, server groups and settings. The
// pages use the layout and building blocks of package views; handlers in
// handlers/console decide what they show.
package console

import (
	"net/url"
	"strconv"
	"time"

	"corral/models"
	"corral/views"
)

// Problem is one finding about a metadata or extra-spec entry, shown next
// to the entry it concerns. Key is "" for a finding about the whole set.
type Problem struct {
	Key     string
	Message string
	Warning bool // true: saved anyway, but worth knowing; false: refused
}

// KV is one metadata or extra-spec row of an editor.
type KV struct {
	Key, Value string
}

// KVEditor is a key/value editor (aggregate metadata, flavor extra specs).
// Rows are the entries as submitted or stored; Blank is how many empty rows
// to offer for new entries. Validate is where htmx posts the form while
// someone types; Action is where the form saves.
type KVEditor struct {
	Action      string
	Validate    string
	Generation  int64
	Rows        []KV
	Blank       int
	Problems    []Problem
	Note        string // what the editor does not show, and why
	ReadOnly    bool
	SubmitLabel string
	TestID      string
	// ImpactForm and ImpactTarget, when set, show under the editor what
	// saving would do (views.InlineImpact).
	ImpactForm, ImpactTarget string
}

// ProblemsFor returns the problems about key.
func (e KVEditor) ProblemsFor(key string) []Problem {
	var out []Problem
	for _, p := range e.Problems {
		if p.Key == key {
			out = append(out, p)
		}
	}
	return out
}

// HasErrors reports whether any problem refuses the save.
func (e KVEditor) HasErrors() bool {
	for _, p := range e.Problems {
		if !p.Warning {
			return true
		}
	}
	return false
}

// SortLink describes one sortable column header.
type SortLink struct {
	Label, Key string
}

// ListState is a list page's search, sort and page.
type ListState struct {
	Path   string
	Search string
	Sort   string
	Desc   bool
	Pager  views.Pager
}

// SortURL is the URL that sorts by key: ascending first, descending when
// the list is already sorted ascending by it.
func (l ListState) SortURL(key string) string {
	q := url.Values{}
	if l.Search != "" {
		q.Set("q", l.Search)
	}
	q.Set("sort", key)
	if l.Sort == key && !l.Desc {
		q.Set("desc", "1")
	}
	if l.Pager.Limit > 0 && l.Pager.Limit != 50 {
		q.Set("limit", strconv.Itoa(l.Pager.Limit))
	}
	return l.Path + "?" + q.Encode()
}

// SortMark is the arrow shown next to the sorted column.
func (l ListState) SortMark(key string) string {
	if l.Sort != key {
		return ""
	}
	if l.Desc {
		return " ↓"
	}
	return " ↑"
}

// AriaSort is the aria-sort value of a column header.
func (l ListState) AriaSort(key string) string {
	if l.Sort != key {
		return "none"
	}
	if l.Desc {
		return "descending"
	}
	return "ascending"
}

// AggregateRow is one line of the aggregate list.
type AggregateRow struct {
	UUID, Name, AZ string
	Members        int
	MetadataKeys   int
	Tenants        []string
	Reservations   []string
	FreePool       bool
	Updated        time.Time
	// Disagreements: hosts Nova and Placement put in this aggregate
	// differently at the last sync (connected mode).
	Disagreements []string
}

// AggregateListProps is the aggregate list page.
type AggregateListProps struct {
	List    ListState
	Rows    []AggregateRow
	CanEdit bool
}

// AggregateForm is the name and availability-zone form, for create and
// edit. ConfirmAZ is the tick that acknowledges the zone warning.
type AggregateForm struct {
	UUID       string // "" when creating
	Generation int64
	Name       string
	AZ         string
	CurrentAZ  string // the zone stored now ("" for none)
	ConfirmAZ  bool
	Hosts      string // create only: hosts to add in the same step
	Errors     map[string]string
}

// Creating reports whether the form creates a new aggregate.
func (f AggregateForm) Creating() bool { return f.UUID == "" }

// Action is where the form posts.
func (f AggregateForm) Action() string {
	if f.Creating() {
		return "/aggregates"
	}
	return "/aggregates/" + f.UUID
}

// TagProps is a typed tag field of an aggregate: the tenant (project) tags
// or the reservation tags.
type TagProps struct {
	AggUUID    string
	Generation int64
	Kind       string // "tenants" or "reservations"
	Tags       []Tag
	Warnings   []string
	Error      string
	Value      string // the value typed into the add field, re-shown on error
	Prefix     string // reservations: the configured key prefix
	Disabled   string // why the field cannot be used, e.g. no prefix configured
	ReadOnly   bool
}

// HasCommaLists reports whether a tag sits in a comma list.
func (t TagProps) HasCommaLists() bool {
	for _, x := range t.Tags {
		if x.Note != "" && x.Key != "" && t.Kind == "tenants" {
			return true
		}
	}
	return false
}

// Tag is one tag with the metadata key that carries it.
type Tag struct {
	Value string
	Key   string
	Note  string // e.g. "comma list: only the post-filter sees it"
}

// MemberRow is one provider in an aggregate, or a candidate to add.
type MemberRow struct {
	UUID, Name string
	Kind       string // host, child, sharing
	Path       string // root › … › parent, for children
	Member     bool   // already in the aggregate (picker)
	Ticked     bool   // ticked in a refused removal, shown ticked again
	// Side is "nova" or "placement" for a member only that side's
	// aggregate has (a synced drift), "" when both have it.
	Side string
}

// PickerProps is the provider picker of an aggregate: a search and the
// matching providers, each shown in its tree.
type PickerProps struct {
	AggUUID    string
	Generation int64
	Query      string
	Results    []MemberRow
	More       bool // more providers match than are shown
	Bulk       string
	Error      string
	ReadOnly   bool
}

// AggregateDetailProps is an aggregate's page.
type AggregateDetailProps struct {
	Agg          *models.Aggregate
	Form         AggregateForm
	Metadata     KVEditor
	Tenants      TagProps
	Reservations TagProps
	Members      []MemberRow
	MembersPager views.Pager
	Hosts        int // members that are hosts (they block deletion); -1 when not all were inspected
	MemberError  string
	Picker       PickerProps
	DeleteReason string // why delete is refused now; "" when allowed
	CanEdit      bool
	// Disagreements: hosts Nova and Placement put in this aggregate
	// differently at the last sync (connected mode).
	Disagreements []string
}

// ProviderNode is a provider in the tree view, with its children.
type ProviderNode struct {
	P          models.Provider
	Kind       string // host, child, sharing
	Path       string // ancestors, root first (search results)
	Aggregates []NamedRef
	Children   []ProviderNode
	Serves     []NamedRef // sharing providers: roots of the trees they serve
	MoreServes int        // served trees not listed
}

// NamedRef names an object by uuid and name, for links.
type NamedRef struct {
	UUID, Name string
}

// ProviderListProps is the provider page: trees one page of roots (or of
// hosts, or of sharing providers) at a time, or, when searching or listing
// children, the matching providers with their place in their tree.
type ProviderListProps struct {
	List    ListState
	Kind    string         // the kind filter: "" (all), host, sharing or child
	Kinds   []views.Option // the filter's choices
	AsTrees bool           // Roots holds trees; else Matches holds a flat list
	Roots   []ProviderNode
	Matches []ProviderNode
}

// KindLabel is the filter's word for the selected kind.
func (d ProviderListProps) KindLabel() string {
	for _, o := range d.Kinds {
		if o.Value == d.Kind {
			return o.Label
		}
	}
	return d.Kind
}

// ProviderDetailProps is one provider's page.
type ProviderDetailProps struct {
	Node      ProviderNode
	Parent    *NamedRef
	Root      *NamedRef
	Inventory []InventoryRow
	// CanEdit shows the inventory and trait forms (admins).
	CanEdit bool
	// Typed is what the inventory form held when it was refused, shown
	// again (empty: the form's defaults).
	Typed InventoryTyped
}

// InventoryTyped is the inventory form's fields as typed.
type InventoryTyped struct{ Class, Total, Reserved, Ratio string }

// InventoryRow is one resource class of a provider.
type InventoryRow struct {
	Class    string
	Total    int64
	Reserved int64
	Ratio    float64
	Used     int64
	Capacity int64   // (total − reserved) × ratio
	Free     int64   // capacity − used, not below 0
	Percent  int     // used of capacity, 0–100
	Fill     float64 // used of capacity, 0–100 unrounded: the bar's drawn share
}

// FlavorRow is one line of the flavor list.
type FlavorRow struct {
	F        models.Flavor
	Problems int
}

// FlavorListProps is the flavor list page.
type FlavorListProps struct {
	List    ListState
	Rows    []FlavorRow
	CanEdit bool
}

// FlavorForm creates or edits a flavor.
type FlavorForm struct {
	Creating   bool
	ID         string
	Generation int64
	Name       string
	VCPUs      string
	RAMMB      string
	DiskGB     string
	Errors     map[string]string
	Specs      KVEditor
	CanEdit    bool
	// Fits says on how many hosts one instance finds an allocation
	// candidate now; empty when unknown.
	Fits string
	// FitsByProject is where one instance may land now, per project,
	// through the whole pipeline.
	FitsByProject []FlavorFitRow
	// Private flavors are usable by the Projects on their access list only
	// (Nova's os-flavor-access, read by a sync).
	Private  bool
	Projects []string
}

// Action is where the flavor form posts.
func (f FlavorForm) Action() string {
	if f.Creating {
		return "/flavors"
	}
	return "/flavors/" + url.PathEscape(f.ID)
}

// GroupRow is one line of the server group list.
type GroupRow struct {
	G          models.ServerGroup
	Violations int
}

// GroupListProps is the server group list page.
type GroupListProps struct {
	Rows        []GroupRow
	Pager       views.Pager
	AllProjects bool // the viewer sees every project's groups
	Project     string
	CanCreate   bool
}

// GroupForm creates a server group.
type GroupForm struct {
	Name       string
	Policy     string
	MaxPerHost string
	Project    string
	AdminView  bool // may create in another project
	Errors     map[string]string
}

// HostCount is how many of a group's members run on one host.
type HostCount struct {
	Host  string
	Count int
	Limit int  // 0 when the policy sets no per-host limit
	Over  bool // the policy is violated on this host
}

// GroupMember is a server in a group.
type GroupMember struct {
	UUID, Name, Host, Project string
	Missing                   bool // the uuid names no known server
}

// GroupDetailProps is a server group's page.
type GroupDetailProps struct {
	G          models.ServerGroup
	Members    []GroupMember
	Hosts      []HostCount
	Violations []string
	AddValue   string
	AddError   string
	Error      string
	CanEdit    bool
}

// SettingsForm is the settings page, as stored or as submitted: one
// section per group of models.SettingTable, each setting a row of it.
type SettingsForm struct {
	Generation int64
	Sections   []SettingsSection
	Errors     map[string]string
	CanEdit    bool
	// NovaConf are the nova.conf lines matching the saved settings.
	NovaConf []string
	// Connected names the cloud corral is connected to ("" standalone):
	// the settings are then corral's assumption of the scheduler's
	// nova.conf, which no API can read or change, and the page says so.
	Connected string
}

// SettingsSection is one group of settings: its switches, its text
// fields, and the host filter table when it holds the filter list.
type SettingsSection struct {
	Title, Help string
	Toggles     []SettingRow
	Fields      []SettingRow
	// FiltersName is the setting the filter table edits ("" for none).
	FiltersName string
	Filters     []FilterSetting
}

// SettingRow is one setting of the form: a switch (On) or a field (Value
// as typed).
type SettingRow struct {
	Name, Label, Help, Value string
	On                       bool
}

// FilterSetting is one host filter's row: on or off, and its position.
type FilterSetting struct {
	Name       string
	Help       string
	Enabled    bool
	Order      string
	OrderField string
}

// Policies lists the server-group policies with a one-line explanation.
var Policies = []views.Option{
	{Value: models.PolicyAntiAffinity, Label: "anti-affinity — never more than max_server_per_host members on one host (default 1)"},
	{Value: models.PolicyAffinity, Label: "affinity — every member on the same host"},
	{Value: models.PolicySoftAntiAffinity, Label: "soft-anti-affinity — spread when possible (a weigher, never refuses)"},
	{Value: models.PolicySoftAffinity, Label: "soft-affinity — pack when possible (a weigher, never refuses)"},
}

func itoa(n int) string { return strconv.Itoa(n) }

func i64(n int64) string { return strconv.FormatInt(n, 10) }

func esc(s string) string { return url.PathEscape(s) }

// ServerListProps is the Servers page: the busiest hosts, then one page of
// servers.
type ServerListProps struct {
	Hosts       []HostServersRow
	HostCount   int // hosts that run any of the listed servers
	Rows        []ServerRow
	Pager       views.Pager
	AllProjects bool // the viewer sees every project's servers
	Project     string
	Host        string
	Search      string
}

// HostServersRow is one host of the summary.
type HostServersRow struct {
	Host              string
	Servers, Projects int
}

// ServerRow is one server, its groups and the X-ray of its request.
type ServerRow struct {
	S      models.Server
	Groups []GroupRef
	XRay   string
}

// GroupRef names a server group a server belongs to.
type GroupRef struct {
	UUID, Name, Policy string
}

// orText is s, or def when s is empty.
func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// FlavorFitRow is one project's answer for one instance of a flavor: the
// hosts it may land on of all hosts, or why none, and the query page
// that shows each host's verdict. A row with More counts the projects
// left out.
type FlavorFitRow struct {
	Project       string
	Passed, Hosts int
	Error         string
	XRay          string
	More          int
}
