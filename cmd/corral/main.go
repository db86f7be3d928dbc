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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"corral/models"
	"corral/models/store"
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
  corral keys rotate --db D
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
		fmt.Fprintln(stderr, "corral: missing command (serve, user, token, keys, export, import, preview, sync, rollout, settings, doctor); see corral help")
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
	case "keys":
		err = cmdKeys(rest, stdout)
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
		err = badUsage("unknown command %q (want serve, user, token, keys, export, import, preview, sync, rollout, settings or doctor)", verb)
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

// cmdKeys is `corral keys rotate`: a new pair of session cookie keys signs
// and encrypts new sessions; sessions under the previous pair stay valid
// until the next rotation. A running server reads the keys when it starts.
func cmdKeys(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		return badUsage("want: corral keys rotate --db D")
	}
	fs := flag.NewFlagSet("keys rotate", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := flags(fs, args[1:])
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
	if err := st.RotateSessionKeys(context.Background(), cliActor()); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "rotated the session keys: new sign-ins use the new pair, sessions under the previous pair stay valid until the next rotation; restart running servers to use it")
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
