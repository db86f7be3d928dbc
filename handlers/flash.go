package handlers

import (
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
