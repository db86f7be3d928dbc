package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"corral/models"
	"corral/models/store"
	"corral/web"
)

// serveOptions is what `corral serve` was asked for, its flags read and
// checked.
type serveOptions struct {
	addr, db, pprofAddr string
	demo, secure        bool
	level               slog.Level
	trusted             []*net.IPNet
	connected           *serveCloud
}

// cmdServe runs the console on --addr until SIGINT or SIGTERM.
func cmdServe(args []string, stdout, stderr io.Writer) error {
	opts, err := parseServeFlags(args)
	if err != nil {
		return err
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: opts.level}))
	st, err := openStore(opts.db)
	if err != nil {
		return err
	}
	defer st.Close()
	st.SetLogger(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var notes []string
	if opts.demo {
		if notes, err = loadDemoNotes(ctx, st); err != nil {
			return err
		}
	}
	// Bind the port before making the first admin: if the port is taken,
	// no password has been generated and lost, and the next start makes
	// the admin and prints its password.
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return err
	}
	users, password, err := ensureDemoAdmin(ctx, st, opts.demo)
	if err != nil {
		ln.Close()
		return err
	}

	syncer, err := opts.connected.syncer(st, log)
	if err != nil {
		ln.Close()
		return err
	}
	identity, err := opts.connected.identity(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	e, err := web.NewApp(st, log, web.Config{SecureCookies: opts.secure, Cloud: syncer, TrustedProxies: opts.trusted,
		Identity: identity, LocalUsers: *opts.connected.localUsers})
	if err != nil {
		ln.Close()
		return err
	}
	if identity != nil {
		mode := "people sign in with their Keystone accounts at " + identity.AuthURL()
		if *opts.connected.localUsers {
			mode += "; corral's own users too (--local-users)"
		}
		fmt.Fprintf(stdout, "Keystone sign-in: %s.\n", mode)
	}
	opts.connected.start(ctx, syncer, log, stdout)
	srv := &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	printServeWelcome(stdout, ln.Addr(), notes, password, users, opts.db)

	if opts.pprofAddr != "" {
		psrv, err := serveProfiles(opts.pprofAddr, log)
		if err != nil {
			return err
		}
		defer psrv.Close()
	}
	return serveUntilStopped(ctx, srv, ln, st, log)
}

// parseServeFlags reads serve's flags and checks them, setting the Go
// runtime's garbage-collection target and memory limit on the way.
func parseServeFlags(args []string) (*serveOptions, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address HOST:PORT (port 0 picks a free one)")
	db := dbFlag(fs)
	demo := fs.Bool("demo", false, "load demo data into an empty database and create an admin user")
	secure := fs.Bool("secure-cookies", false, "mark cookies Secure even over plain HTTP (behind a TLS proxy)")
	proxies := fs.String("trusted-proxies", "", "CIDR ranges (comma-separated) of reverse proxies whose X-Forwarded-For names the client")
	connected := serveCloudFlags(fs)
	memLimit := fs.String("memory-limit", "auto", "soft memory limit of the Go heap, e.g. 768MiB or 2GiB; auto: GOMEMLIMIT if set, else a quarter of the machine's (or container's) memory, at most 768MiB; 0: none")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's profiles (net/http/pprof) on this separate HOST:PORT, e.g. 127.0.0.1:6060; off when empty")
	logLevel := fs.String("log-level", "info", "debug (also every successful read), info (changes, refusals, start and stop), warn or error")
	pos, err := flags(fs, args)
	if err != nil {
		return nil, err
	}
	if err = noArgs(pos); err != nil {
		return nil, err
	}
	// The server keeps one large, long-lived snapshot of the world; with the
	// default GOGC every few requests' garbage triggers a full mark of it.
	// A higher target trades some memory for a shorter latency tail.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if _, _, err = net.SplitHostPort(*addr); err != nil {
		return nil, badUsage("--addr %q: want HOST:PORT", *addr)
	}
	var level slog.Level
	if err = level.UnmarshalText([]byte(*logLevel)); err != nil {
		return nil, badUsage("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	limit, err := memoryLimit(*memLimit)
	if err != nil {
		return nil, err
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	trusted, err := web.ParseTrustedProxies(*proxies)
	if err != nil {
		return nil, badUsage("--trusted-proxies: %v", err)
	}
	return &serveOptions{addr: *addr, db: *db, pprofAddr: *pprofAddr, demo: *demo, secure: *secure,
		level: level, trusted: trusted, connected: connected}, nil
}

// loadDemoNotes loads the demo data into an empty database and returns the
// note that says whether it did.
func loadDemoNotes(ctx context.Context, st *store.Store) ([]string, error) {
	loaded, err := st.LoadDemo(ctx)
	if err != nil {
		return nil, err
	}
	if loaded {
		return []string{"Loaded the demo data (the seed topology, tenant and reservation aggregates, flavors, server groups)."}, nil
	}
	return []string{"The database already holds data; the demo data was not loaded again."}, nil
}

// ensureDemoAdmin counts the users and, for --demo on a database without
// any, creates the admin with a new password, which it returns.
func ensureDemoAdmin(ctx context.Context, st *store.Store, demo bool) (users int, password string, err error) {
	users, err = st.CountUsers(ctx)
	if err != nil {
		return 0, "", err
	}
	if users == 0 && demo {
		password = newPassword()
		first := store.Actor{Name: "corral serve --demo", Via: "cli", Role: models.RoleAdmin}
		if _, err = st.CreateUser(ctx, first, "admin", password, models.RoleAdmin, ""); err != nil {
			return 0, "", err
		}
	}
	return users, password, nil
}

// printServeWelcome prints where corral serves, the notes, and how to sign
// in: with the new admin's password, or by creating or resetting a user.
func printServeWelcome(stdout io.Writer, addr net.Addr, notes []string, password string, users int, db string) {
	fmt.Fprintf(stdout, "%s%s\n", servingPrefix, displayURL(addr))
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	switch {
	case password != "":
		fmt.Fprintf(stdout, "%s%s\n", passwordPrefix, password)
		fmt.Fprintln(stdout, "The password is shown only this once. To set a new one: corral user password --db "+db+" --name admin  (password on stdin)")
	case users == 0:
		fmt.Fprintln(stdout, "There are no users yet. Create one: corral user create --db "+db+" --name NAME --role admin  (password on stdin)")
	default:
		fmt.Fprintln(stdout, "Sign in with an existing user. To add one: corral user create --db "+db+" --name NAME --role admin;")
		fmt.Fprintln(stdout, "to reset a password: corral user password --db "+db+" --name NAME  (passwords on stdin)")
	}
	if f, ok := stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}
}

// serveProfiles serves Go's profiles on their own address; the caller
// closes the returned server.
func serveProfiles(addr string, log *slog.Logger) (*http.Server, error) {
	pln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	psrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go psrv.Serve(pln)
	log.Info("profiles served", "url", "http://"+pln.Addr().String()+"/debug/pprof/")
	return psrv, nil
}

// serveUntilStopped serves on ln, warms the world's snapshot meanwhile,
// and shuts the server down gracefully when ctx ends (SIGINT or SIGTERM).
func serveUntilStopped(ctx context.Context, srv *http.Server, ln net.Listener, st *store.Store, log *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The world's snapshot is built while the server already listens:
	// requests that need it wait for it, /healthz says "starting".
	go func() {
		t := time.Now()
		if err := st.Live().Warm(ctx); err != nil {
			log.Error("building the world's snapshot", "err", err)
			return
		}
		log.Info("world snapshot ready", "took", time.Since(t).Round(time.Millisecond))
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// maxAutoMemoryLimit caps the automatic memory limit: the 100,000-provider
// cloud lives well within it.
const maxAutoMemoryLimit = 768 << 20

// memoryLimit reads --memory-limit: a size with a unit (KiB, MiB, GiB, or
// bytes), 0 for none, or auto.
func memoryLimit(v string) (int64, error) {
	if v == "auto" {
		if os.Getenv("GOMEMLIMIT") != "" {
			return 0, nil // the runtime already applies it
		}
		total := machineMemory()
		if total <= 0 {
			return maxAutoMemoryLimit, nil
		}
		return min(total/4, maxAutoMemoryLimit), nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}, {"", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 || n > math.MaxInt64/u.mult {
				break
			}
			if n > 0 && n*u.mult < 64<<20 {
				return 0, badUsage("--memory-limit %q: below 64MiB the server cannot hold a world", v)
			}
			return n * u.mult, nil
		}
	}
	return 0, badUsage("--memory-limit %q: want a size like 768MiB or 2GiB, 0 or auto", v)
}

// machineMemory is the memory this process may use: the cgroup's limit
// when there is one, else the machine's; 0 when unknown.
func machineMemory() int64 {
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// displayURL is the URL to open for a listener: an unspecified host
// (0.0.0.0, ::) is shown as loopback, which works from the same machine.
func displayURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return "http://" + a.String() + "/"
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return fmt.Sprintf("http://%s/", net.JoinHostPort(host, fmt.Sprint(tcp.Port)))
}

func newPassword() string {
	b := make([]byte, 15)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
