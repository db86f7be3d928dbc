package views

import (
	"net/url"
	"strconv"
)

// Option is one choice of a select field.
type Option struct {
	Value, Label string
}

// FieldProps describes one labelled form input. Error, when set, is shown
// next to the field and marks it invalid.
type FieldProps struct {
	Label        string
	Name         string
	Type         string // text (default), password, number, search, datetime-local, textarea, select, checkbox
	Value        string
	Error        string
	Help         string
	Placeholder  string
	Autocomplete string
	Required     bool
	Autofocus    bool
	Checked      bool     // for Type "checkbox"; Value is what a checked box sends ("true" when empty)
	Options      []Option // for Type "select"
	Suggestions  []string // offered as a datalist for text inputs; any value may still be typed
}

func (f FieldProps) id() string { return "f-" + f.Name }

func (f FieldProps) inputType() string {
	if f.Type == "" {
		return "text"
	}
	return f.Type
}

func (f FieldProps) describedBy() string {
	switch {
	case f.Error != "":
		return f.id() + "-error"
	case f.Help != "":
		return f.id() + "-help"
	}
	return ""
}

// Pager describes one page of a longer list: Offset and Limit as the store
// takes them, Total as it reports it, and the list's URL (path and filter
// query) to which the pager adds offset and limit.
type Pager struct {
	Offset, Limit, Total int
	Path                 string
	Query                url.Values
}

// From is the 1-based index of the first row shown (0 when empty).
func (p Pager) From() int {
	if p.Total == 0 {
		return 0
	}
	return p.Offset + 1
}

// To is the 1-based index of the last row shown.
func (p Pager) To() int {
	to := p.Offset + p.Limit
	if to > p.Total {
		to = p.Total
	}
	return to
}

// HasPrev reports whether there is a page before this one.
func (p Pager) HasPrev() bool { return p.Offset > 0 }

// HasNext reports whether there is a page after this one.
func (p Pager) HasNext() bool { return p.Limit > 0 && p.Offset+p.Limit < p.Total }

// PrevURL is the previous page's URL.
func (p Pager) PrevURL() string {
	o := p.Offset - p.Limit
	if o < 0 {
		o = 0
	}
	return p.url(o)
}

// NextURL is the next page's URL.
func (p Pager) NextURL() string { return p.url(p.Offset + p.Limit) }

func (p Pager) url(offset int) string {
	q := url.Values{}
	for k, v := range p.Query {
		if k != "offset" && k != "limit" {
			q[k] = v
		}
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if len(q) == 0 {
		return p.Path
	}
	return p.Path + "?" + q.Encode()
}

// Confirm is a confirmation step before a destructive action. Without
// JavaScript the action's link leads to a page showing Message with a form
// that POSTs to Action; with htmx the same link POSTs directly after the
// browser's confirm dialog.
type Confirm struct {
	Title   string
	Message string
	Action  string // where the confirming form POSTs
	Cancel  string // where "Cancel" leads
	Button  string // the confirming button's label, e.g. "Revoke token"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
