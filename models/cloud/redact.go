package cloud

import (
	"net/url"
	"regexp"
	"strings"
)

// RedactURL is u without the password of its user information and without
// secrets in its query, for errors, logs, the sync record and pages.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return RedactText(u)
	}
	if p.User != nil {
		if _, has := p.User.Password(); has {
			p.User = url.UserPassword(p.User.Username(), redacted)
		}
	}
	q := p.Query()
	changed := false
	for k := range q {
		if secretName(k) {
			q.Set(k, redacted)
			changed = true
		}
	}
	if changed {
		p.RawQuery = q.Encode()
	}
	return p.String()
}

const redacted = "xxxxx"

func secretName(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "token") || strings.Contains(k, "password") || strings.Contains(k, "secret")
}

var (
	// userinfoInURL is the user:password@ of a URL anywhere in a text.
	userinfoInURL = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@\s:]*):([^/@\s]*)@`)
	// tokenHeader is an X-Auth-Token or X-Subject-Token header echoed in a
	// body, in any common quoting ("X-Auth-Token": "…", X-Auth-Token: …).
	// The keyword must start a word of its own: a cloud named
	// "ks-password" is a name, not a secret's label.
	tokenHeader = regexp.MustCompile(`(?i)((?:^|[^A-Za-z0-9-])(?:x-auth-token|x-subject-token|x-service-token|auth[_-]?token|"token"|password|secret)["']?\s*[:=]\s*["']?)([^"'\s,;}]+)`)
	// fernetToken is a Keystone Fernet token wherever it appears.
	fernetToken = regexp.MustCompile(`gAAAAA[A-Za-z0-9_\-=]{20,}`)
)

// RedactText removes credentials from a text a service or a transport
// wrote (an error, a fault body): passwords in URLs, tokens in headers
// echoed back, Keystone tokens.
func RedactText(s string) string {
	s = userinfoInURL.ReplaceAllString(s, "${1}${2}:"+redacted+"@")
	s = tokenHeader.ReplaceAllString(s, "${1}"+redacted)
	return fernetToken.ReplaceAllString(s, redacted)
}

// maxStoredError bounds an error kept in the sync record or a rollout's
// report: enough for a service's message, not a whole page it answered.
const maxStoredError = 2000

// StoredError is err's message as corral stores and shows it: without
// credentials, on one line, bounded.
func StoredError(err error) string {
	s := RedactText(strings.Join(strings.Fields(err.Error()), " "))
	if len(s) > maxStoredError {
		s = strings.ToValidUTF8(s[:maxStoredError], "") + "…"
	}
	return s
}
