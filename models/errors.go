package models

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Kind classifies an error so that one table (handlers.StatusOf) can map it
// to an HTTP status, and the CLI to an exit code. The zero Kind is Internal.
type Kind uint8

const (
	Internal      Kind = iota // a bug or an unreachable dependency: 500
	Invalid                   // bad input: 400
	NotFound                  // no such object (or not visible to the caller): 404
	Conflict                  // stale generation, duplicate name, object in use: 409
	Forbidden                 // authenticated but not allowed: 403
	Unauthorized              // no or bad credentials: 401
	NotAcceptable             // e.g. an unsupported microversion: 406
	OverQuota                 // a quota would be exceeded: 403 in Nova's API
	Unavailable               // the database cannot be reached or is busy for now: 503, try again
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not found"
	case Conflict:
		return "conflict"
	case Forbidden:
		return "forbidden"
	case Unauthorized:
		return "unauthorized"
	case NotAcceptable:
		return "not acceptable"
	case Unavailable:
		return "unavailable"
	case OverQuota:
		return "over quota"
	}
	return "internal"
}

// Error is corral's error: what was attempted (Op), which input field was at
// fault (Field, may be empty), what kind of failure it is, and a message a
// person can act on. Err keeps the underlying cause, if any.
//
// Error() is what a person is shown: "field: message", never the Op or a
// cause the message already explains. Logs use Detail, which adds both:
// "op: field: message: cause".
type Error struct {
	Op    string
	Kind  Kind
	Field string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString(e.Kind.String())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Detail is the error for a log: "op: field: message: cause", leaving out
// the parts that are empty.
func (e *Error) Detail() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	switch {
	case e.Msg != "" && e.Err != nil:
		b.WriteString(e.Msg)
		b.WriteString(": ")
		b.WriteString(Detail(e.Err))
	case e.Msg != "":
		b.WriteString(e.Msg)
	case e.Err != nil:
		b.WriteString(Detail(e.Err))
	default:
		b.WriteString(e.Kind.String())
	}
	return b.String()
}

// LogValue makes slog print Detail for an *Error logged as a value.
func (e *Error) LogValue() slog.Value { return slog.StringValue(e.Detail()) }

// Detail is err for a log: a corral error's Detail, with the text of any
// errors wrapping it in front; other errors as Error() has them.
func Detail(err error) string {
	if err == nil {
		return ""
	}
	var ce *Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	if e, ok := err.(*Error); ok {
		return e.Detail()
	}
	// Something wraps the corral error: keep its words, with the corral
	// error's own in detail.
	outer, inner := err.Error(), ce.Error()
	if prefix, ok := strings.CutSuffix(outer, inner); ok {
		return prefix + ce.Detail()
	}
	return outer + " (" + ce.Detail() + ")"
}

// E builds an Error of the given kind. Use Errorf-style formatting for Msg.
func E(kind Kind, field, format string, args ...any) *Error {
	return &Error{Kind: kind, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Wrap annotates err with an operation; a non-corral error becomes Internal.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		c := *ce
		if c.Op == "" {
			c.Op = op
		}
		return &c
	}
	return &Error{Op: op, Kind: Internal, Err: err}
}

// KindOf reports the Kind of err; errors that are not *Error are Internal.
func KindOf(err error) Kind {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return Internal
}

// FieldOf reports the input field an error names, if any.
func FieldOf(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Field
	}
	return ""
}

// Is reports whether err is a corral error of the given kind.
func Is(kind Kind, err error) bool { return err != nil && KindOf(err) == kind }
