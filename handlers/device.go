package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/labstack/echo/v4"
)

// deviceCookie remembers, signed and encrypted with the session keys, the
// user names this browser signed in with: the per-user sign-in limit lets
// them through, so that failing on purpose cannot lock someone out.
const (
	deviceCookie   = "corral_device"
	deviceTTL      = 90 * 24 * time.Hour
	maxDeviceNames = 8
)

func deviceID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:12])
}

func (s *Sessions) deviceNames(c echo.Context) []string {
	ck, err := c.Cookie(deviceCookie)
	if err != nil {
		return nil
	}
	var v string
	if securecookie.DecodeMulti(deviceCookie, ck.Value, &v, s.device...) != nil {
		return nil
	}
	return strings.Split(v, ",")
}

// KnownDevice reports whether this browser signed in before under key.
func (s *Sessions) KnownDevice(c echo.Context, key string) bool {
	return slices.Contains(s.deviceNames(c), deviceID(key))
}

// RememberDevice marks this browser as one that signed in under key.
func (s *Sessions) RememberDevice(c echo.Context, key string) {
	id := deviceID(key)
	names := slices.DeleteFunc(s.deviceNames(c), func(n string) bool { return n == id || n == "" })
	names = append([]string{id}, names...)
	if len(names) > maxDeviceNames {
		names = names[:maxDeviceNames]
	}
	v, err := securecookie.EncodeMulti(deviceCookie, strings.Join(names, ","), s.device...)
	if err != nil {
		return
	}
	c.SetCookie(&http.Cookie{Name: deviceCookie, Value: v, Path: "/login", MaxAge: int(deviceTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.Secure || c.IsTLS() || c.Scheme() == "https"})
}
