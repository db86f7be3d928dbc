package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"corral/models/cloud"
)

// cmdRollout pushes a draft's changes to the cloud (connected mode).
func cmdRollout(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rollout", flag.ContinueOnError)
	db := dbFlag(fs)
	conn := connectionFlags(fs)
	draftID := fs.String("draft", "", "the draft to roll out (id)")
	dryRun := fs.Bool("dry-run", false, "print the plan (API calls and openstack commands), send nothing")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	if *draftID == "" {
		return badUsage("--draft is required")
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
	plan, err := cloud.PlanDraft(ctx, st, *draftID)
	if err != nil {
		return err
	}
	printPlan(stdout, plan)
	if *dryRun {
		return nil
	}
	client, err := cloud.Connect(ctx, *conn)
	if err != nil {
		return err
	}
	defer client.Close()
	rep, err := client.RolloutDraft(ctx, st, cliActor(), plan, conn.Describe())
	if rep != nil {
		printRollout(stdout, rep)
	}
	if err != nil {
		return err
	}
	switch {
	case len(rep.Drift) > 0:
		return fmt.Errorf("the cloud drifted: %d difference(s), nothing was sent", len(rep.Drift))
	case rep.Failed != nil:
		return fmt.Errorf("rollout stopped at call %d of %d: %s", len(rep.Done)+1, len(plan.Steps), rep.Error)
	}
	fmt.Fprintf(stdout, "rolled out %d call(s); re-synced as revision %d\n", len(rep.Done), rep.Sync.Record.Revision)
	return nil
}

func printRollout(w io.Writer, rep *cloud.RolloutReport) {
	if len(rep.Drift) > 0 {
		fmt.Fprintln(w, "refused: the cloud changed since the last sync (run corral sync and review the draft again):")
		for _, l := range rep.Drift {
			fmt.Fprintf(w, "  %s\n", l)
		}
		return
	}
	for _, s := range rep.Done {
		fmt.Fprintf(w, "done: %s\n", s)
	}
	for _, l := range rep.Mirrored {
		fmt.Fprintf(w, "warning: %s\n", l)
	}
	if rep.Failed != nil {
		fmt.Fprintf(w, "failed: %s\n  %s\n", rep.Failed, rep.Error)
		for _, s := range rep.NotDone {
			fmt.Fprintf(w, "not done: %s\n", s)
		}
		if rep.UndoID != "" {
			fmt.Fprintf(w, "undo draft: %s (corral rollout --draft %s undoes what was done)\n", rep.UndoID, rep.UndoID)
		}
		for _, l := range rep.NoUndo {
			fmt.Fprintf(w, "no undo: %s\n", l)
		}
	}
}

func printPlan(w io.Writer, p *cloud.Plan) {
	fmt.Fprintf(w, "plan (%d call(s)):\n", len(p.Steps))
	for i, s := range p.Steps {
		fmt.Fprintf(w, "%3d. %s: %s\n     %s\n", i+1, s.Service, s, s.Openstack)
	}
	for _, l := range p.NotRolledOut {
		fmt.Fprintf(w, "not rolled out: %s\n", l)
	}
}
