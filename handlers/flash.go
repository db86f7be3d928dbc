package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"

	"corral/views"
)

// Flash kinds, one per outcome.
const (
	FlashSuccess = views.FlashSuccess
	FlashWarning = views.FlashWarning
	FlashError   = views.FlashError
)

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
func Flashes(c echo.Context) []views.Flash {
	st := session(c)
	if st == nil {
		return nil
	}
	raw := st.sess.Flashes()
	if len(raw) == 0 {
		return nil
	}
	st.dirty = true
	out := make([]views.Flash, 0, len(raw))
	for _, r := range raw {
		s, ok := r.(string)
		if !ok {
			continue
		}
		kind, msg, ok := strings.Cut(s, ":")
		if !ok {
			kind, msg = FlashSuccess, s
		}
		out = append(out, views.Flash{Kind: kind, Msg: msg})
	}
	return out
}
