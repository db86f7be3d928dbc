package scheduling

import (
	"strconv"
	"strings"
)

// Applied is what an applier reports of a list of changes it wrote: the
// revision it made live and the changes that undo it (the before-values of
// every object it wrote, as ChangesBetween computes them). NoUndo names,
// one line each, what was written and cannot be undone by a change (empty
// when everything can).
type Applied struct {
	Revision int64    `json:"revision"`
	Revert   []Change `json:"revert_changes"`
	NoUndo   []string `json:"no_undo,omitempty"`
	// Cloud says what a connected write did in the cloud; nil when the
	// write went to corral's own database (standalone).
	Cloud *CloudWrite `json:"cloud,omitempty"`
}

// CloudWrite is what a connected write did in the cloud (Applied.Cloud):
// the calls it made, and what it kept in corral only, with why.
type CloudWrite struct {
	Calls []string `json:"calls"`
	// Local names what stays in corral only (the scheduler's settings,
	// which live in nova.conf), with the nova.conf lines to change.
	Local []string `json:"local,omitempty"`
	// Created maps the uuid a change gave an object it creates to the id
	// the cloud gave it instead: Nova chooses a server group's uuid.
	Created map[string]string `json:"created,omitempty"`
}

// IDOf is the id the object a change created under uuid has now: the
// cloud's when a connected write created it there, else uuid itself.
func (a *Applied) IDOf(uuid string) string {
	if a != nil && a.Cloud != nil && a.Cloud.Created[uuid] != "" {
		return a.Cloud.Created[uuid]
	}
	return uuid
}

// Summary says where a connected write went, for a person: "rolled out
// to the cloud: 2 calls", and what was kept in corral only.
func (w *CloudWrite) Summary() string {
	msg := "rolled out to the cloud: " + plural(len(w.Calls), "call")
	if len(w.Calls) == 0 {
		msg = "nothing sent to the cloud"
	}
	if len(w.Local) > 0 {
		msg += "; kept in corral only: " + strings.Join(w.Local, "; ")
	}
	return msg
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
