// Command corral is the admin console for where things may land in an
// OpenStack cloud, and its command-line tools.
//
//	corral serve --addr HOST:PORT --db PATH|URL [--demo] [--secure-cookies] [--memory-limit SIZE] [--log-level L] [--pprof-addr HOST:PORT]
//	corral user create --db D --name N --role admin|member|reader [--project P]   (password on stdin)
//	corral user password --db D --name N                                        (password on stdin)
//	corral token create --db D --user N [--name TOKEN-NAME]
//	corral export --db D
//	corral import --db D [--replace] [--no-blazar] FILE
//	corral preview [FILE]
//	corral sync --db D (--os-cloud NAME | --compute-url URL --placement-url URL --token T) [--dry-run]
//	corral rollout --db D --draft ID (connection flags) [--dry-run]
//	corral settings import --db D nova.conf
//	corral settings export --db D
//
// --db defaults to $CORRAL_DATABASE_URL, then to corral.db (SQLite). A
// postgres:// URL selects PostgreSQL.
package main

import (
	"bufio"
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

// Lines of serve's output that scripts (and the tests) read.
const (
	servingPrefix  = "corral is serving "
	passwordPrefix = "Sign in as admin with password: "
)

const usage = `usage:
  corral serve --addr HOST:PORT --db PATH|URL [--demo] [--secure-cookies] [--memory-limit SIZE] [--log-level L] [--pprof-addr HOST:PORT]
               [connection flags [--sync-every 5m]]
  corral user create --db D --name N --role admin|member|reader [--project P]  (password on stdin)
  corral user password --db D --name N  (password on stdin)
  corral token create --db D --user N [--name TOKEN-NAME]
  corral export --db D
  corral import --db D [--replace] [--no-blazar] FILE
  corral preview [FILE]
  corral sync --db D (--os-cloud NAME | --compute-url URL --placement-url URL --token T) [--dry-run]
  corral rollout --db D --draft ID (same connection flags) [--dry-run]
  corral settings import --db D nova.conf
  corral settings export --db D
  corral doctor --db D [--format text|json]  (exit 1 while an error finding is not acknowledged)`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// usageError is bad command-line usage: exit status 2, one line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func badUsage(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "corral: missing command (serve, user, token, export, import, preview, sync, rollout, settings, doctor); see corral help")
		return 2
	}
	var err error
	switch verb, rest := args[0], args[1:]; verb {
	case "serve":
		err = cmdServe(rest, stdout, stderr)
	case "user":
		err = cmdUser(rest, stdin, stdout)
	case "token":
		err = cmdToken(rest, stdout)
	case "export":
		err = cmdExport(rest, stdout)
	case "import":
		err = cmdImport(rest, stdout, stderr)
	case "preview":
		return runPreview(rest, stdin, stdout, stderr)
	case "sync":
		err = cmdSync(rest, stdout, stderr)
	case "rollout":
		err = cmdRollout(rest, stdout, stderr)
	case "settings":
		err = cmdSettings(rest, stdout)
	case "doctor":
		err = cmdDoctor(rest, stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usage)
		return 0
	default:
		err = badUsage("unknown command %q (want serve, user, token, export, import, preview, sync, rollout, settings or doctor)", verb)
	}
	if err == nil {
		return 0
	}
	var df errDoctorFindings
	if errors.As(err, &df) {
		return 1 // the report said it all
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "corral %s: %s\n", args[0], oneLine(ue.msg))
		return 2
	}
	fmt.Fprintf(stderr, "corral %s: %s\n", args[0], oneLine(err.Error()))
	if models.KindOf(err) == models.Invalid {
		return 2 // bad input, like bad usage
	}
	return 1
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// flags parses args allowing flags and positional arguments in any order
// (Go's flag package stops at the first positional one). A parse error is
// a usage error.
func flags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, badUsage("see corral help")
			}
			return nil, badUsage("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func dbFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("CORRAL_DATABASE_URL")
	if def == "" {
		def = "corral.db"
	}
	return fs.String("db", def, "SQLite file or postgres:// URL")
}

func noArgs(pos []string) error {
	if len(pos) > 0 {
		return badUsage("unexpected argument %q", pos[0])
	}
	return nil
}

// cliActor is who the audit log records for command-line changes.
func cliActor() store.Actor {
	name := os.Getenv("USER")
	if name == "" {
		name = "cli"
	}
	return store.Actor{Name: name, Via: "cli", Role: models.RoleAdmin}
}

func openStore(dsn string) (*store.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return store.Open(ctx, dsn)
}

// --- serve ------------------------------------------------------------------

func cmdServe(args []string, stdout, stderr io.Writer) error {
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
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	// The server keeps one large, long-lived snapshot of the world; with the
	// default GOGC every few requests' garbage triggers a full mark of it.
	// A higher target trades some memory for a shorter latency tail.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if _, _, err = net.SplitHostPort(*addr); err != nil {
		return badUsage("--addr %q: want HOST:PORT", *addr)
	}
	var level slog.Level
	if err = level.UnmarshalText([]byte(*logLevel)); err != nil {
		return badUsage("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	limit, err := memoryLimit(*memLimit)
	if err != nil {
		return err
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	trusted, err := web.ParseTrustedProxies(*proxies)
	if err != nil {
		return badUsage("--trusted-proxies: %v", err)
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	st.SetLogger(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var notes []string
	if *demo {
		var loaded bool
		loaded, err = st.LoadDemo(ctx)
		if err != nil {
			return err
		}
		if loaded {
			notes = append(notes, "Loaded the demo data (the seed topology, tenant and reservation aggregates, flavors, server groups).")
		} else {
			notes = append(notes, "The database already holds data; the demo data was not loaded again.")
		}
	}
	// Bind the port before making the first admin: if the port is taken,
	// no password has been generated and lost, and the next start makes
	// the admin and prints its password.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	users, err := st.CountUsers(ctx)
	if err != nil {
		ln.Close()
		return err
	}
	var password string
	if users == 0 && *demo {
		password = newPassword()
		first := store.Actor{Name: "corral serve --demo", Via: "cli", Role: models.RoleAdmin}
		if _, err = st.CreateUser(ctx, first, "admin", password, models.RoleAdmin, ""); err != nil {
			ln.Close()
			return err
		}
	}

	syncer, err := connected.syncer(st, log)
	if err != nil {
		ln.Close()
		return err
	}
	e, err := web.NewApp(st, log, web.Config{SecureCookies: *secure, Cloud: syncer, TrustedProxies: trusted})
	if err != nil {
		ln.Close()
		return err
	}
	connected.start(ctx, syncer, log, stdout)
	srv := &http.Server{
		Handler:           e,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	fmt.Fprintf(stdout, "%s%s\n", servingPrefix, displayURL(ln.Addr()))
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	switch {
	case password != "":
		fmt.Fprintf(stdout, "%s%s\n", passwordPrefix, password)
		fmt.Fprintln(stdout, "The password is shown only this once. To set a new one: corral user password --db "+*db+" --name admin  (password on stdin)")
	case users == 0:
		fmt.Fprintln(stdout, "There are no users yet. Create one: corral user create --db "+*db+" --name NAME --role admin  (password on stdin)")
	default:
		fmt.Fprintln(stdout, "Sign in with an existing user. To add one: corral user create --db "+*db+" --name NAME --role admin;")
		fmt.Fprintln(stdout, "to reset a password: corral user password --db "+*db+" --name NAME  (passwords on stdin)")
	}
	if f, ok := stdout.(interface{ Sync() error }); ok {
		_ = f.Sync()
	}

	if *pprofAddr != "" {
		pln, err := net.Listen("tcp", *pprofAddr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		psrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go psrv.Serve(pln)
		defer psrv.Close()
		log.Info("profiles served", "url", "http://"+pln.Addr().String()+"/debug/pprof/")
	}
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

// --- user -------------------------------------------------------------------

func cmdUser(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return badUsage("missing subcommand (create or password)")
	}
	switch args[0] {
	case "create":
		return cmdUserCreate(args[1:], stdin, stdout)
	case "password":
		return cmdUserPassword(args[1:], stdin, stdout)
	}
	return badUsage("unknown subcommand %q (want create or password)", args[0])
}

// readPassword takes the first line of stdin.
func readPassword(stdin io.Reader) (string, error) {
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", badUsage("no password on stdin")
	}
	return pw, nil
}

func cmdUserCreate(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	db := dbFlag(fs)
	name := fs.String("name", "", "user name")
	role := fs.String("role", "", "admin, member or reader")
	project := fs.String("project", "", "project id")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	if *name == "" {
		return badUsage("--name is required")
	}
	if !models.Role(*role).Valid() {
		return badUsage("--role must be admin, member or reader")
	}
	pw, err := readPassword(stdin)
	if err != nil {
		return err
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.CreateUser(context.Background(), cliActor(), *name, pw, models.Role(*role), *project)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created user %s (%s)\n", u.Name, u.Role)
	return nil
}

func cmdUserPassword(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("user password", flag.ContinueOnError)
	db := dbFlag(fs)
	name := fs.String("name", "", "user name")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	if *name == "" {
		return badUsage("--name is required")
	}
	pw, err := readPassword(stdin)
	if err != nil {
		return err
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetPassword(context.Background(), cliActor(), *name, pw); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "password of %s changed\n", *name)
	return nil
}

// --- token ------------------------------------------------------------------

func cmdToken(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return badUsage("want: corral token create --db D --user N")
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	db := dbFlag(fs)
	user := fs.String("user", "", "the user the token acts as")
	name := fs.String("name", "", "a name to recognise the token by (default: cli and the date)")
	pos, err := flags(fs, args[1:])
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	if *user == "" {
		return badUsage("--user is required")
	}
	if *name == "" {
		*name = "cli " + time.Now().UTC().Format("2006-01-02 15:04")
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	plain, _, err := st.CreateToken(context.Background(), cliActor(), *user, *name)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, plain)
	return nil
}

// --- export / import ----------------------------------------------------------

func cmdExport(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	w, err := st.ExportWorld(context.Background())
	if err != nil {
		return err
	}
	return models.EncodeWorld(stdout, w)
}

func cmdImport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	db := dbFlag(fs)
	replace := fs.Bool("replace", false, "replace everything instead of merging")
	noBlazar := fs.Bool("no-blazar", false, "import Blazar's aggregates and flavors as they are, without reservation and tenant tags")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badUsage("want exactly one FILE (the world JSON)")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := models.DecodeWorld(f)
	if err != nil {
		return err
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	w, lines, err := st.PrepareImport(context.Background(), w, *replace, !*noBlazar)
	if err != nil {
		return err
	}
	if err := st.ImportWorld(context.Background(), cliActor(), w, *replace); err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(stderr, l)
	}
	fmt.Fprintf(stdout, "imported %d providers, %d aggregates, %d flavors, %d servers, %d server groups\n",
		len(w.Providers), len(w.Aggregates), len(w.Flavors), len(w.Servers), len(w.ServerGroups))
	return nil
}
