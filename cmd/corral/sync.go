package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"corral/models/cloud"
	"corral/models/store"
)

// connectionFlags are the flags that connect corral to a real cloud; serve
// and sync share them.
func connectionFlags(fs *flag.FlagSet) *cloud.Options {
	o := &cloud.Options{EnvCloud: os.Getenv("OS_CLOUD")}
	fs.StringVar(&o.Cloud, "os-cloud", "", "cloud name in clouds.yaml, default $OS_CLOUD unless URL flags are given (the OS_* environment applies, as for the openstack CLI)")
	fs.StringVar(&o.ComputeURL, "compute-url", "", "compute API URL including /v2.1 (without Keystone)")
	fs.StringVar(&o.PlacementURL, "placement-url", "", "Placement API URL (without Keystone)")
	fs.StringVar(&o.Token, "token", "", "token sent as X-Auth-Token to both services (without Keystone); visible to local users in the process list: prefer --token-file or $OS_TOKEN")
	fs.StringVar(&o.TokenFile, "token-file", "", "file holding the token (without Keystone); default $OS_TOKEN")
	fs.StringVar(&o.Region, "os-region", "", "region of the clouds.yaml cloud to govern, instead of its region_name (default $OS_REGION_NAME)")
	return o
}

// cmdSync reads the cloud into live state and prints what changed.
func cmdSync(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sync", flag.ContinueOnError)
	db := dbFlag(fs)
	conn := connectionFlags(fs)
	dryRun := fs.Bool("dry-run", false, "print what changed, store nothing")
	parallel := fs.Int("parallel", 8, "concurrent requests to each service")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	if *parallel < 1 || *parallel > 64 {
		return badUsage("--parallel must be 1 to 64")
	}
	if err = conn.Validate(); err != nil {
		return badUsage("%s", err.Error())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	client, err := cloud.Connect(ctx, *conn)
	if err != nil {
		return err
	}
	defer client.Close()
	res, err := cloud.Sync(ctx, st, client, cliActor(), cloud.SyncOptions{
		DryRun: *dryRun, Parallel: *parallel, Connection: conn.Describe(), Progress: progressLine(stderr),
	})
	if err != nil {
		return err
	}
	printSync(stdout, res, *dryRun)
	return nil
}

// progressLine reports provider reads on stderr at most once a second, so a
// long sync shows it is moving without flooding a terminal or a log.
func progressLine(w io.Writer) func(done, total int) {
	var mu sync.Mutex
	last := time.Now()
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done == total && total >= 100 || time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(w, "reading placement: %d of %d providers\n", done, total)
		}
	}
}

func printSync(w io.Writer, res *cloud.SyncResult, dryRun bool) {
	s := res.Stats
	verb := "synced"
	if dryRun {
		verb = "read (dry run, nothing stored)"
	}
	fmt.Fprintf(w, "%s in %s: %d requests; providers %d read, %d unchanged; consumers %d read, %d unchanged; compute %s, placement %s\n",
		verb, s.Duration.Round(time.Millisecond), s.Requests, s.ProvidersRead, s.ProvidersReused, s.ConsumersRead, s.ConsumersReused, s.ComputeVersion, s.PlacementVersion)
	c := res.Counts
	fmt.Fprintf(w, "cloud: %d providers, %d aggregates, %d flavors, %d servers, %d server groups\n",
		c["providers"], c["aggregates"], c["flavors"], c["servers"], c["server_groups"])
	if res.Stored {
		fmt.Fprintf(w, "stored as revision %d\n", res.Record.Revision)
	}
	if len(res.Changes) == 0 {
		fmt.Fprintln(w, "no changes since the last sync")
	} else {
		fmt.Fprintf(w, "changes since the last sync (%d):\n", len(res.Changes))
		for _, ch := range res.Changes {
			fmt.Fprintf(w, "  %s\n", ch)
		}
	}
	if len(res.Disagreements) > 0 {
		fmt.Fprintf(w, "nova and placement disagree (%d; nova-manage placement sync_aggregates repairs it):\n", len(res.Disagreements))
		for _, d := range res.Disagreements {
			fmt.Fprintf(w, "  ! %s\n", d.Message)
		}
	}
	for _, line := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", line)
	}
}

// The store is what the cloud adapter reads from and writes to.
var (
	_ cloud.SyncerStore = (*store.Store)(nil)
	_ cloud.DraftStore  = (*store.Store)(nil)
)

// serveCloud is serve's connected mode: the connection flags and
// --sync-every.
type serveCloud struct {
	conn       *cloud.Options
	every      *time.Duration
	localUsers *bool
}

func serveCloudFlags(fs *flag.FlagSet) *serveCloud {
	return &serveCloud{conn: connectionFlags(fs), every: fs.Duration("sync-every", 0, "with a connection: sync the cloud this often (e.g. 5m); 0 syncs at start and on demand"),
		localUsers: fs.Bool("local-users", false, "connected through Keystone: let corral's own users sign in too (a break-glass account); standalone they always do")}
}

// identity is the cloud's Keystone when the connection goes through one
// (people sign in there); nil otherwise.
func (sc *serveCloud) identity(ctx context.Context) (*cloud.Identity, error) {
	if !sc.conn.Configured() {
		if *sc.localUsers {
			return nil, badUsage("--local-users needs a connection through Keystone (--os-cloud)")
		}
		return nil, nil
	}
	id, err := cloud.NewIdentity(ctx, *sc.conn)
	if err != nil {
		return nil, err
	}
	if id == nil && *sc.localUsers {
		return nil, badUsage("--local-users needs a connection through Keystone (--os-cloud with an auth_url)")
	}
	return id, nil
}

// syncer is the connected mode's syncer when connection flags were given;
// nil keeps corral standalone.
func (sc *serveCloud) syncer(st *store.Store, log *slog.Logger) (*cloud.Syncer, error) {
	if !sc.conn.Configured() {
		if *sc.every != 0 {
			return nil, badUsage("--sync-every needs a connection (--os-cloud, or --compute-url/--placement-url/--token)")
		}
		return nil, nil
	}
	if err := sc.conn.Validate(); err != nil {
		return nil, badUsage("%s", err.Error())
	}
	if *sc.every < 0 || (*sc.every > 0 && *sc.every < 10*time.Second) {
		return nil, badUsage("--sync-every must be at least 10s")
	}
	return &cloud.Syncer{Store: st, Options: *sc.conn, Every: *sc.every, Log: log}, nil
}

// start syncs at once, then every --sync-every, until ctx ends.
func (sc *serveCloud) start(ctx context.Context, s *cloud.Syncer, log *slog.Logger, stdout io.Writer) {
	if s == nil {
		return
	}
	if s.Every > 0 {
		go s.Run(ctx)
		fmt.Fprintf(stdout, "Connected to %s; syncing every %s.\n", s.Connection(), s.Every)
		return
	}
	go func() {
		if _, err := s.SyncNow(ctx, store.Actor{Name: "corral", Via: "sync", Role: "admin"}); err != nil && ctx.Err() == nil {
			log.Warn("sync failed", "connection", s.Connection(), "error", err.Error())
		}
	}()
	fmt.Fprintf(stdout, "Connected to %s; syncing now and on demand (the Cloud page).\n", s.Connection())
}
