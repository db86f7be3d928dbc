package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"corral/models"
	"corral/models/cloud"
	"corral/models/scheduling"
	"corral/models/store"
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
	if err := noArgs(pos); err != nil {
		return err
	}
	if *draftID == "" {
		return badUsage("--draft is required")
	}
	if err := conn.Validate(); err != nil {
		return badUsage("%s", err.Error())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := st.GetDraft(ctx, *draftID)
	if err != nil {
		return err
	}
	conflicts, err := st.DraftConflicts(ctx, d)
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		return models.E(models.Conflict, "draft", "draft %s no longer applies: %s", d.Name, strings.Join(conflicts, "; "))
	}
	changes, err := d.DraftChanges()
	if err != nil {
		return err
	}
	kept, err := cloud.LoadKept(ctx, st)
	if err != nil {
		return err
	}
	live, err := st.ExportWorld(ctx)
	if err != nil {
		return err
	}
	plan, err := cloud.PlanRollout(kept, live, changes)
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
	actor := cliActor()
	rep, err := client.Rollout(ctx, st, actor, plan, conn.Describe())
	if err != nil {
		return err
	}
	if len(rep.Drift) > 0 {
		fmt.Fprintln(stdout, "refused: the cloud changed since the last sync (run corral sync and review the draft again):")
		for _, l := range rep.Drift {
			fmt.Fprintf(stdout, "  %s\n", l)
		}
		return fmt.Errorf("the cloud drifted: %d difference(s), nothing was sent", len(rep.Drift))
	}
	for _, s := range rep.Done {
		fmt.Fprintf(stdout, "done: %s\n", s)
	}
	for _, l := range rep.Mirrored {
		fmt.Fprintf(stdout, "warning: %s\n", l)
	}
	if rep.Failed != nil {
		fmt.Fprintf(stdout, "failed: %s\n  %s\n", rep.Failed, rep.Error)
		for _, s := range rep.NotDone {
			fmt.Fprintf(stdout, "not done: %s\n", s)
		}
		if rep.UndoID != "" {
			fmt.Fprintf(stdout, "undo draft: %s (corral rollout --draft %s undoes what was done)\n", rep.UndoID, rep.UndoID)
		}
		return fmt.Errorf("rollout stopped at step %d of %d: %s", len(rep.Done)+1, len(plan.Steps), rep.Error)
	}
	// The re-sync brought the cloud's side in; what has no API (settings)
	// is applied to corral itself, then the draft is done.
	if err := applyLocalPart(ctx, st, actor, changes); err != nil {
		return err
	}
	if err := st.DiscardDraft(ctx, actor, d.ID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "rolled out %d call(s); re-synced as revision %d\n", len(rep.Done), rep.Sync.Record.Revision)
	return nil
}

func applyLocalPart(ctx context.Context, st *store.Store, actor store.Actor, changes []scheduling.Change) error {
	var local []scheduling.Change
	for _, c := range changes {
		if c.Op == scheduling.OpSetSettings {
			local = append(local, c)
		}
	}
	if len(local) == 0 {
		return nil
	}
	d, err := st.CreateDraft(ctx, actor, "settings of a rollout")
	if err == nil {
		d, err = st.SetDraftChanges(ctx, actor, d.ID, d.Version, local)
	}
	if err == nil {
		err = st.ApplyDraft(ctx, actor, d.ID, d.Version)
	}
	return err
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
