package webtest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"corral/handlers"
	"corral/models"
	"corral/models/store"
	"corral/web"
)

// DefaultPassword is the password of a User that names none.
const DefaultPassword = "webtest-user-pass"

// User is someone the app knows from the start.
type User struct {
	Name     string
	Role     models.Role
	Project  string
	Password string // DefaultPassword when empty
}

// Options say what StartWith starts.
type Options struct {
	// Store is the database to serve (from storetest, say); nil opens a
	// fresh SQLite file, closed with the test.
	Store *store.Store
	// Demo loads the demo cloud first.
	Demo bool
	// Users are created in order.
	Users []User
	// Tokens gives every user an API token, in App.Tokens.
	Tokens bool
	// Clock makes the app read the time from App.Clock, which stands still
	// unless advanced, so that tests can expire sessions.
	Clock bool
	// Config tunes the application.
	Config web.Config
	// Log receives the request log, at Info, as JSON lines (nil: only
	// with CORRAL_TEST_LOG, on stderr).
	Log io.Writer
	// Writer is the write path the doors hand their changes to (nil: the
	// store).
	Writer handlers.Applier
}

// StartWith runs the application for the rest of the test as opts say.
// Set CORRAL_TEST_LOG to see its request log on stderr.
func StartWith(t testing.TB, opts Options) *App {
	t.Helper()
	ctx := context.Background()
	st, db := opts.Store, ""
	if st == nil {
		db = filepath.Join(t.TempDir(), "corral.db")
		var err error
		if st, err = store.Open(ctx, db); err != nil {
			t.Fatalf("webtest: open store: %v", err)
		}
		t.Cleanup(func() { st.Close() })
	}
	if opts.Demo {
		if _, err := st.LoadDemo(ctx); err != nil {
			t.Fatalf("webtest: load demo data: %v", err)
		}
	}
	app := &App{DBPath: db, Store: st, t: t, users: map[string]User{}}
	cli := store.Actor{Name: "webtest", Via: "cli"}
	for _, u := range opts.Users {
		if u.Password == "" {
			u.Password = DefaultPassword
		}
		if _, err := st.CreateUser(ctx, cli, u.Name, u.Password, u.Role, u.Project); err != nil {
			t.Fatalf("webtest: create user %s: %v", u.Name, err)
		}
		app.users[u.Name] = u
		if opts.Tokens {
			if app.Tokens == nil {
				app.Tokens = map[string]string{}
			}
			app.Tokens[u.Name] = app.NewToken(t, u.Name)
		}
	}
	var logOut io.Writer = io.Discard
	if os.Getenv("CORRAL_TEST_LOG") != "" {
		logOut = os.Stderr
	}
	log := slog.New(slog.NewTextHandler(logOut, nil))
	if opts.Log != nil {
		log = slog.New(slog.NewJSONHandler(opts.Log, nil))
	}
	app.Env = &handlers.Env{Store: st, Log: log, Writer: opts.Writer}
	if opts.Clock {
		app.Clock = &Clock{t: time.Now()}
		app.Env.Now = app.Clock.Now
	}
	e, err := web.New(app.Env, opts.Config)
	if err != nil {
		t.Fatalf("webtest: web.New: %v", err)
	}
	app.Echo = e
	srv := httptest.NewServer(e) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	app.URL = srv.URL
	return app
}

// Password is the password of a user StartWith created.
func (a *App) Password(name string) string {
	if u, ok := a.users[name]; ok {
		return u.Password
	}
	if name == a.AdminName {
		return a.AdminPassword
	}
	return ""
}

// Clock is a test clock: it stands still unless advanced.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
