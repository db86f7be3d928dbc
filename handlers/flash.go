package handlers

import (
	"encoding/json"
	"strings"

	"github.com/labstack/echo/v4"
)

// Flash kinds, one per outcome. views styles them by these names.
const (
	FlashSuccess = "success"
	FlashWarning = "warning"
	FlashError   = "error"
)

// Flash is a one-time message for the top of the next page.
type Flash struct {
	Kind string // FlashSuccess, FlashWarning or FlashError
	Msg  string
}

// AddFlash queues a message for the next page this browser sees (after a
// redirect, typically). kind is FlashSuccess, FlashWarning or FlashError.
func AddFlash(c echo.Context, kind, msg string) {
	st := session(c)
	if st == nil {
		return
	}
	st.sess.AddFlash(kind + ":" + msg)
	st.dirty = true
}

// Flashes takes the queued messages; each is shown once.
func Flashes(c echo.Context) []Flash {
	st := session(c)
	if st == nil {
		return nil
	}
	raw := st.sess.Flashes()
	if len(raw) == 0 {
		return nil
	}
	st.dirty = true
	out := make([]Flash, 0, len(raw))
	for _, r := range raw {
		s, ok := r.(string)
		if !ok {
			continue
		}
		kind, msg, ok := strings.Cut(s, ":")
		if !ok {
			kind, msg = FlashSuccess, s
		}
		out = append(out, Flash{Kind: kind, Msg: msg})
	}
	return out
}

// formErrorsKey is the session key of a refused form's messages.
func formErrorsKey(form string) string { return "form-errors:" + form }

// KeepFormErrors keeps a refused form's messages, by field, for the page
// the browser is sent back to (post/redirect/get). They are the messages
// that page cannot find again by checking the typed values itself: a
// concurrent edit, a name already taken.
func KeepFormErrors(c echo.Context, form string, errs map[string]string) {
	st := session(c)
	if st == nil || len(errs) == 0 {
		return
	}
	b, err := json.Marshal(errs)
	if err != nil {
		return
	}
	st.sess.Values[formErrorsKey(form)] = string(b)
	st.dirty = true
}

// TakeFormErrors returns the messages kept for form, once.
func TakeFormErrors(c echo.Context, form string) map[string]string {
	st := session(c)
	if st == nil {
		return nil
	}
	raw, ok := st.sess.Values[formErrorsKey(form)].(string)
	if !ok {
		return nil
	}
	delete(st.sess.Values, formErrorsKey(form))
	st.dirty = true
	var errs map[string]string
	if json.Unmarshal([]byte(raw), &errs) != nil {
		return nil
	}
	return errs
}
