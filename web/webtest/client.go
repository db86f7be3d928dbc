package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"corral/models/store"
)

// Client is one browser-like HTTP client of an App: a cookie jar, no
// automatic redirects (tests look at them) and no Sec-Fetch-Site header, so
// that the CSRF token path is the one exercised unless a test sets the
// header. With Token set it sends X-Auth-Token on every request, as a
// script would.
type Client struct {
	T     testing.TB
	App   *App
	HTTP  *http.Client
	Token string
}

// Client returns a new client that is not signed in; t receives its
// failures.
func (a *App) Client(t testing.TB) *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{T: t, App: a, HTTP: &http.Client{
		Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// SignIn returns a client signed in as name through the sign-in form, with
// the password the app created name with; it fails t unless that worked.
func (a *App) SignIn(t testing.TB, name string) *Client {
	t.Helper()
	c := a.Client(t)
	if r := c.Login(name, a.Password(name)); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("webtest: sign in as %s: status %d, want 303; errors: %q", name, r.StatusCode, r.ErrorsText())
	}
	return c
}

// TokenClient returns a client that authenticates with name's API token
// (from Options.Tokens, or a new one) and keeps no session.
func (a *App) TokenClient(t testing.TB, name string) *Client {
	t.Helper()
	tok, ok := a.Tokens[name]
	if !ok {
		tok = a.NewToken(t, name)
	}
	c := a.Client(t)
	c.Token = tok
	return c
}

// NewToken creates an API token for the user name and returns it.
func (a *App) NewToken(t testing.TB, name string) string {
	t.Helper()
	tok, _, err := a.Store.CreateToken(context.Background(), store.Actor{Name: "webtest", Via: "cli"}, name, "webtest")
	if err != nil {
		t.Fatalf("webtest: create a token for %s: %v", name, err)
	}
	return tok
}

// Login submits the sign-in form and returns the answer, whatever it is.
func (c *Client) Login(name, password string) *Response {
	c.T.Helper()
	return c.Submit("/login", "/login", url.Values{"name": {name}, "password": {password}})
}

// Response is an answer with its body read.
type Response struct {
	*http.Response
	Body string
	doc  *goquery.Document
}

// Do sends req (the client's token added) and reads the whole answer.
func (c *Client) Do(req *http.Request) *Response {
	c.T.Helper()
	r, err := c.Try(req)
	if err != nil {
		c.T.Fatal(err)
	}
	return r
}

// Try is Do for other goroutines: it reports instead of failing.
func (c *Client) Try(req *http.Request) (*Response, error) {
	if c.Token != "" && req.Header.Get("X-Auth-Token") == "" {
		req.Header.Set("X-Auth-Token", c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", req.Method, req.URL, err)
	}
	return &Response{Response: resp, Body: string(b)}, nil
}

// Request sends method path with body and the headers given as name,
// value pairs.
func (c *Client) Request(method, path string, body io.Reader, hdr ...string) *Response {
	c.T.Helper()
	req, err := http.NewRequest(method, c.App.URL+path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.Do(req)
}

// Get sends GET path with the headers given as name, value pairs.
func (c *Client) Get(path string, hdr ...string) *Response {
	c.T.Helper()
	return c.Request(http.MethodGet, path, nil, hdr...)
}

// Post sends form to path as a browser submits a form, without a CSRF
// token unless form has one.
func (c *Client) Post(path string, form url.Values, hdr ...string) *Response {
	c.T.Helper()
	return c.Request(http.MethodPost, path, strings.NewReader(form.Encode()),
		append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hdr...)...)
}

// JSON sends body as JSON (a string or []byte as is, anything else
// marshalled; nil sends nothing) with the headers given as name, value
// pairs.
func (c *Client) JSON(method, path string, body any, hdr ...string) *Response {
	c.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			c.T.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	if rd != nil {
		hdr = append([]string{"Content-Type", "application/json"}, hdr...)
	}
	return c.Request(method, path, rd, hdr...)
}

// CSRF loads path and returns the CSRF token of its first form.
func (c *Client) CSRF(path string) string {
	c.T.Helper()
	r := c.Get(path)
	tok, ok := r.Doc(c.T).Find(`input[name="_csrf"]`).First().Attr("value")
	if !ok || tok == "" {
		c.T.Fatalf("GET %s: no _csrf field in the page (status %d)", path, r.StatusCode)
	}
	return tok
}

// Submit posts form to action with the CSRF token of the page at from, as
// a browser submitting that page's form does.
func (c *Client) Submit(from, action string, form url.Values) *Response {
	c.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("_csrf", c.CSRF(from))
	return c.Post(action, form)
}

// Follow submits and follows the redirect, returning the page shown next
// (whose flashes say what happened). It fails unless the answer is a 303.
func (c *Client) Follow(from, action string, form url.Values) *Response {
	c.T.Helper()
	r := c.Submit(from, action, form)
	if r.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("POST %s: status %d, want 303; flashes/errors: %q", action, r.StatusCode, r.ErrorsText())
	}
	return c.Get(r.Header.Get("Location"))
}

// Cookie is the client's cookie called name, or nil.
func (c *Client) Cookie(name string) *http.Cookie {
	u, _ := url.Parse(c.App.URL)
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// SetCookie is the cookie called name that the response sets, or nil.
func (r *Response) SetCookie(name string) *http.Cookie {
	for _, ck := range r.Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// Doc parses the body as HTML.
func (r *Response) Doc(t testing.TB) *goquery.Document {
	t.Helper()
	if r.doc == nil {
		d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
		if err != nil {
			t.Fatalf("parse HTML: %v", err)
		}
		r.doc = d
	}
	return r.doc
}

// Sel selects the elements whose data-testid is id.
func Sel(id string) string { return `[data-testid="` + id + `"]` }

// Text is the trimmed text of the elements with data-testid id.
func (r *Response) Text(t testing.TB, id string) string {
	t.Helper()
	return strings.TrimSpace(r.Doc(t).Find(Sel(id)).Text())
}

// Words is the text of the elements with data-testid id, each run of white
// space made one space.
func (r *Response) Words(t testing.TB, id string) string {
	t.Helper()
	return strings.Join(strings.Fields(r.Doc(t).Find(Sel(id)).Text()), " ")
}

// Texts lists the trimmed text of each element with data-testid id.
func (r *Response) Texts(t testing.TB, id string) []string {
	t.Helper()
	var out []string
	r.Doc(t).Find(Sel(id)).Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
	return out
}

// Count is how many elements have data-testid id.
func (r *Response) Count(t testing.TB, id string) int {
	t.Helper()
	return r.Doc(t).Find(Sel(id)).Length()
}

// Has reports whether an element with data-testid id exists.
func (r *Response) Has(t testing.TB, id string) bool {
	t.Helper()
	return r.Count(t, id) > 0
}

// ErrorsText gathers every error and flash shown, for failure messages.
func (r *Response) ErrorsText() string {
	d, err := goquery.NewDocumentFromReader(strings.NewReader(r.Body))
	if err != nil {
		return r.Body
	}
	return strings.Join(strings.Fields(d.Find(".error, .flash, [data-testid=error-message]").Text()), " ")
}

// Object decodes the body as a JSON object.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.Body, err)
	}
	return v
}

// Confirm answers the safety gate: when r is the page that asks to
// confirm a write's consequences (409 with the review form), it posts that
// form again to action with the confirmation ticked and returns the
// answer; otherwise it returns r.
func (c *Client) Confirm(r *Response, action string) *Response {
	c.T.Helper()
	if r.StatusCode != http.StatusConflict {
		return r
	}
	doc := r.Doc(c.T)
	review := doc.Find(Sel("review-form"))
	if review.Length() == 0 {
		return r
	}
	form := url.Values{}
	review.Find(`input[type="hidden"], input[name="confirm_impact"]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		form.Add(name, s.AttrOr("value", ""))
	})
	if form.Get("confirm_impact") == "" {
		c.T.Fatalf("POST %s: the review page has no confirmation to tick", action)
	}
	return c.Post(action, form)
}

// FollowConfirmed is Follow for a write whose consequences need the
// safety gate's confirmation: it confirms them when asked.
func (c *Client) FollowConfirmed(from, action string, form url.Values) *Response {
	c.T.Helper()
	r := c.Confirm(c.Submit(from, action, form), action)
	if r.StatusCode != http.StatusSeeOther {
		c.T.Fatalf("POST %s: status %d, want 303; flashes/errors: %q", action, r.StatusCode, r.ErrorsText())
	}
	return c.Get(r.Header.Get("Location"))
}
