package novatest

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Round is what nova-scheduler logged for one instance of a request.
type Round struct {
	// Filtered are the hosts that passed Placement and every host filter
	// ("Filtered [...]"), in the scheduler's order.
	Filtered []string
	// Weighed are those hosts by weight, highest first ("Weighed [...]").
	Weighed []WeighedHost
}

// WeighedHost is one entry of the scheduler's "Weighed" line.
type WeighedHost struct {
	Host   string
	Weight float64
}

// Decision is the scheduler's decision on one boot request, read from its
// DEBUG log by request id.
type Decision struct {
	Rounds []Round
	// NoCandidates: Placement returned no allocation candidates.
	NoCandidates bool
	// FilterCounts are the "Filter X returned N host(s)" lines of the first
	// round, in order ("X=N").
	FilterCounts []string
}

// Eligible is the first instance's filtered hosts (none when Placement
// had no candidate).
func (d Decision) Eligible() []string {
	if len(d.Rounds) == 0 {
		return nil
	}
	return d.Rounds[0].Filtered
}

// Best is the first instance's highest-weighed hosts: those whose weight
// is at least the subset-th highest, from which nova picks one at random
// (host_subset_size; ties with the last of the subset are included).
func (d Decision) Best(subset int) []string {
	if len(d.Rounds) == 0 || len(d.Rounds[0].Weighed) == 0 {
		return nil
	}
	w := d.Rounds[0].Weighed
	cut := w[min(max(subset, 1), len(w))-1].Weight
	var out []string
	for _, h := range w {
		if h.Weight >= cut {
			out = append(out, h.Host)
		}
	}
	return out
}

var (
	hostStateRE = regexp.MustCompile(`\(([^,()]+), [^()]+\) ram: `)
	weighedRE   = regexp.MustCompile(`WeighedHost \[host: \(([^,()]+), [^()]+\) ram: [^\]]*?, weight: ([-+0-9.eE]+)\]`)
	filterRE    = regexp.MustCompile(`Filter (\w+) returned (\d+) host\(s\)`)
)

// Decision reads the scheduler's log for request reqID.
func (c *Cloud) Decision(reqID string) (Decision, error) {
	var d Decision
	f, err := os.Open(filepath.Join(c.Dir, "nova", "scheduler.log"))
	if err != nil {
		return d, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	tag := "[None " + reqID + " "
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, tag) {
			continue
		}
		switch {
		case strings.Contains(line, "Got no allocation candidates"):
			d.NoCandidates = true
		case strings.Contains(line, "] Filtered ["):
			var r Round
			for _, m := range hostStateRE.FindAllStringSubmatch(line[strings.Index(line, "] Filtered [")+1:], -1) {
				r.Filtered = append(r.Filtered, m[1])
			}
			d.Rounds = append(d.Rounds, r)
		case strings.Contains(line, "] Weighed ["):
			if len(d.Rounds) == 0 {
				return d, fmt.Errorf("request %s: a Weighed line before any Filtered line", reqID)
			}
			r := &d.Rounds[len(d.Rounds)-1]
			for _, m := range weighedRE.FindAllStringSubmatch(line, -1) {
				w, perr := strconv.ParseFloat(m[2], 64)
				if perr != nil {
					return d, fmt.Errorf("request %s: weight %q: %v", reqID, m[2], perr)
				}
				r.Weighed = append(r.Weighed, WeighedHost{Host: m[1], Weight: w})
			}
		default:
			if m := filterRE.FindStringSubmatch(line); m != nil && len(d.Rounds) == 0 {
				d.FilterCounts = append(d.FilterCounts, m[1]+"="+m[2])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return d, err
	}
	if len(d.Rounds) == 0 && !d.NoCandidates {
		return d, fmt.Errorf("request %s: the scheduler logged no decision", reqID)
	}
	return d, nil
}

// Boot is one boot request: min_count servers of a flavor from an image,
// without networks.
type Boot struct {
	Name    string
	Project string // "" is the admin project
	Flavor  string // flavor id
	Image   string // image id
	Zone    string
	Group   string // server group uuid, as the "group" scheduler hint
	// SameHost and DifferentHost are server uuids, as those hints.
	SameHost, DifferentHost []string
	Count                   int // min_count = max_count; 0 is 1
	Metadata                map[string]string
}

// Booted is what became of a boot: the request id, and per server its
// status and host (for a server in ERROR, its fault's message).
type Booted struct {
	RequestID string
	Servers   []BootedServer
}

// BootedServer is one server of a boot.
type BootedServer struct {
	ID, Status, Host, Fault string
}

// Hosts are the hosts the boot's servers landed on, sorted ("" for a
// server that did not land).
func (b Booted) Hosts() []string {
	var out []string
	for _, s := range b.Servers {
		out = append(out, s.Host)
	}
	slices.Sort(out)
	return out
}

// Placed says whether every server went ACTIVE.
func (b Booted) Placed() bool {
	for _, s := range b.Servers {
		if s.Status != "ACTIVE" {
			return false
		}
	}
	return len(b.Servers) > 0
}

// Boot boots b and waits until none of its servers is building.
func (c *Cloud) Boot(b Boot) (Booted, error) {
	n := max(b.Count, 1)
	server := map[string]any{"name": b.Name, "imageRef": b.Image, "flavorRef": b.Flavor, "networks": "none",
		"min_count": n, "max_count": n, "return_reservation_id": true}
	if b.Zone != "" {
		server["availability_zone"] = b.Zone
	}
	if b.Metadata != nil {
		server["metadata"] = b.Metadata
	}
	body := map[string]any{"server": server}
	hints := map[string]any{}
	if b.Group != "" {
		hints["group"] = b.Group
	}
	if len(b.SameHost) > 0 {
		hints["same_host"] = b.SameHost
	}
	if len(b.DifferentHost) > 0 {
		hints["different_host"] = b.DifferentHost
	}
	if len(hints) > 0 {
		body["os:scheduler_hints"] = hints
	}
	var res struct {
		ReservationID string `json:"reservation_id"`
	}
	id, err := c.Compute("POST", "servers", b.Project, body, &res, http.StatusAccepted)
	if err != nil {
		return Booted{}, err
	}
	out := Booted{RequestID: id}
	deadline := time.Now().Add(2 * time.Minute)
	// A boot takes a second or more: polling sooner only loads nova-api.
	time.Sleep(800 * time.Millisecond)
	for {
		var list struct {
			Servers []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
				Host   string `json:"OS-EXT-SRV-ATTR:host"`
				Fault  struct {
					Message string `json:"message"`
				} `json:"fault"`
			} `json:"servers"`
		}
		if _, err := c.Compute("GET", "servers/detail?all_tenants=1&reservation_id="+res.ReservationID, "", nil, &list, http.StatusOK); err != nil {
			return out, err
		}
		building := len(list.Servers) < n
		out.Servers = out.Servers[:0]
		for _, s := range list.Servers {
			building = building || s.Status == "BUILD"
			out.Servers = append(out.Servers, BootedServer{ID: s.ID, Status: s.Status, Host: s.Host, Fault: s.Fault.Message})
		}
		if !building {
			return out, nil
		}
		if time.Now().After(deadline) {
			return out, fmt.Errorf("boot %s (request %s): still building after 2 minutes", b.Name, id)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
