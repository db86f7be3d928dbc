package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"corral/models"
	"corral/models/scheduling"
)

// Applier is the write path of a connected corral: every door's changes
// go to the cloud, never to corral's database alone. It refuses up front
// what the cloud's APIs cannot carry (or corral cannot roll out yet);
// plans the calls against the last sync; re-reads every object the plan
// touches and refuses on drift; makes the calls, each audited with the
// acting person; and re-syncs, so that corral holds what the cloud holds.
// The scheduler's settings, which live in nova.conf, are the one thing
// kept in corral only, as the assumption its previews run on; the answer
// says so and shows the nova.conf lines to change.
type Applier struct {
	Syncer *Syncer
	Store  ApplierStore
	// Wait is how long a write waits for a running sync to end before it
	// is refused as Unavailable (30 s when zero).
	Wait time.Duration
}

// Apply rolls changes out to the cloud, all or none as far as the cloud
// allows: a call that fails stops the rollout, and the error says what was
// done and names the draft that undoes it.
func (a *Applier) Apply(ctx context.Context, actor models.Actor, changes []scheduling.Change) (*scheduling.Applied, error) {
	if len(changes) == 0 {
		return &scheduling.Applied{}, nil
	}
	var out *scheduling.Applied
	err := a.exclusive(ctx, func(c *Client) error {
		kept, live, err := a.lastSync(ctx)
		if err != nil {
			return err
		}
		// A form read corral's generations; a write (or a sync) since
		// gave the object a new one. Checked under the lock syncs take.
		if err = a.Store.CheckGenerations(ctx, changes); err != nil {
			return err
		}
		next, err := scheduling.ApplyChanges(live, changes)
		if err != nil {
			return err
		}
		if err = refuseUncarried(live, next); err != nil {
			return err
		}
		plan, err := PlanRollout(kept, live, changes)
		if err != nil {
			return err
		}
		out, err = a.rollOut(ctx, c, actor, plan, live, next)
		return err
	})
	return out, err
}

// ApplyDraft rolls the stored draft id out, as reviewed at version, and
// consumes it once every call succeeded.
func (a *Applier) ApplyDraft(ctx context.Context, actor models.Actor, id string, version int64) (*scheduling.Applied, error) {
	var out *scheduling.Applied
	err := a.exclusive(ctx, func(c *Client) error {
		v, err := a.Store.DraftVersion(ctx, id)
		if err != nil {
			return err
		}
		if v != version {
			return models.E(models.Conflict, "version", "the draft was changed since you reviewed it — reload")
		}
		plan, err := PlanDraft(ctx, a.Store, id)
		if err != nil {
			return err
		}
		_, live, err := a.lastSync(ctx)
		if err != nil {
			return err
		}
		next, err := scheduling.ApplyChanges(live, plan.changes)
		if err != nil {
			return err
		}
		if err = refuseUncarried(live, next); err != nil {
			return err
		}
		if out, err = a.rollOut(ctx, c, actor, plan, live, next); err != nil {
			return err
		}
		return a.Store.DiscardDraft(ctx, actor, id)
	})
	return out, err
}

// ImportWorldAt rolls out what it takes to turn the cloud, as last
// synced, into the world an import of w would leave live; refused as a
// Conflict when corral's revision is no longer expect (negative: no
// check).
func (a *Applier) ImportWorldAt(ctx context.Context, actor models.Actor, w *models.World, replace bool, expect int64) error {
	if w == nil {
		return models.E(models.Invalid, "world", "no world given")
	}
	return a.exclusive(ctx, func(c *Client) error {
		next, rev, err := a.Store.ImportedWorld(ctx, w, replace)
		if err != nil {
			return err
		}
		if expect >= 0 && rev != expect {
			return models.E(models.Conflict, "", "the world was changed by someone else since revision %d (now %d) — reload", expect, rev)
		}
		kept, live, err := a.lastSync(ctx)
		if err != nil {
			return err
		}
		if err = refuseUncarried(live, next); err != nil {
			return err
		}
		plan, err := PlanWorlds(kept, live, next)
		if err != nil {
			return err
		}
		_, err = a.rollOut(ctx, c, actor, plan, live, next)
		return err
	})
}

// lastSync is what the last sync kept of the cloud and corral's live
// world; refused when there was no sync yet.
func (a *Applier) lastSync(ctx context.Context) (*Kept, *models.World, error) {
	kept, err := LoadKept(ctx, a.Store)
	if err != nil {
		return nil, nil, err
	}
	if kept == nil {
		return nil, nil, models.E(models.Unavailable, "", "corral has not synced the cloud yet, so it cannot plan a change to it: sync first (the Cloud page's Sync now, or corral sync)")
	}
	live, err := a.Store.ExportWorld(ctx)
	return kept, live, err
}

// rollOut makes plan's calls and keeps the settings (which no API
// carries) in corral; it turns a drift, a failed call or a failed re-sync
// into an error that says what happened in the cloud.
func (a *Applier) rollOut(ctx context.Context, c *Client, actor models.Actor, plan *Plan, live, next *models.World) (*scheduling.Applied, error) {
	out := &scheduling.Applied{Cloud: &scheduling.CloudWrite{}}
	if len(plan.Steps) > 0 {
		rep, err := c.Rollout(ctx, a.Store, actor, plan, a.Syncer.Connection())
		if rep == nil {
			return nil, err
		}
		if len(rep.Drift) > 0 {
			where := ""
			if plan.DraftID != "" {
				where = " (the draft's rebase page, /drafts/" + plan.DraftID + "/rebase, shows each field beside the draft's base)"
			}
			return nil, models.E(models.Conflict, "", "the cloud changed since corral's last sync, so nothing was sent: %s. Sync (the Cloud page's Sync now), check that the change still makes sense%s, and make it again",
				strings.Join(rep.Drift, "; "), where)
		}
		if rep.Failed != nil {
			return nil, partialFailure(rep)
		}
		for i := len(plan.Steps) - 1; i >= 0; i-- {
			s := plan.Steps[i]
			out.Revert = append(out.Revert, s.undo...)
			if s.undo == nil {
				out.NoUndo = append(out.NoUndo, s.String())
			}
		}
		for _, s := range rep.Done {
			out.Cloud.Calls = append(out.Cloud.Calls, s.String())
			if s.Kind == "group_create" && s.planned != "" {
				if out.Cloud.Created == nil {
					out.Cloud.Created = map[string]string{}
				}
				out.Cloud.Created[s.planned] = s.id
			}
		}
		if err != nil {
			return nil, models.E(models.Unavailable, "", "%s (%d call(s) made: %s)", err.Error(), len(rep.Done), strings.Join(out.Cloud.Calls, "; "))
		}
		if rep.Sync != nil {
			out.Revision = rep.Sync.Record.Revision
		}
	}
	if o := scheduling.SettingsOverrideBetween(live.Settings, next.Settings); o != nil {
		applied, err := a.Store.Apply(ctx, actor, []scheduling.Change{{Op: scheduling.OpSetSettings, Settings: o}})
		if err != nil {
			if len(out.Cloud.Calls) > 0 {
				return nil, models.E(models.KindOf(err), models.FieldOf(err), "rolled out to the cloud (%s), but the settings could not be kept in corral: %v",
					strings.Join(out.Cloud.Calls, "; "), err)
			}
			return nil, err
		}
		out.Revision = applied.Revision
		out.Revert = append(out.Revert, applied.Revert...)
		out.Cloud.Local = append(out.Cloud.Local, "the scheduler's settings, which live in nova.conf on the scheduler hosts: corral cannot read or change them, and previews assume them. Set in nova.conf: "+
			strings.Join(novaConfChanges(live.Settings, next.Settings), ", "))
	}
	return out, nil
}

// partialFailure is the error of a rollout stopped by a failed call: which
// calls were done, which failed and why, and the draft that undoes them.
func partialFailure(rep *RolloutReport) error {
	kind := refusalKind(rep.FailedStatus)
	if len(rep.Done) == 0 {
		return models.E(kind, "", "the cloud refused %s: %s. Nothing was changed", rep.Failed.String(), rep.Error)
	}
	var done []string
	for _, s := range rep.Done {
		done = append(done, s.String())
	}
	msg := fmt.Sprintf("the rollout stopped: the cloud refused %s: %s. Done before it (and kept in the cloud): %s",
		rep.Failed.String(), rep.Error, strings.Join(done, "; "))
	if len(rep.NotDone) > 0 {
		msg += fmt.Sprintf(". Not sent: %d call(s)", len(rep.NotDone))
	}
	if rep.UndoID != "" {
		msg += ". The draft " + rep.UndoID + " (\"undo partial rollout\", /drafts/" + rep.UndoID + ") undoes what was done"
	}
	if len(rep.NoUndo) > 0 {
		msg += ". No draft can undo these; undo them by hand: " + strings.Join(rep.NoUndo, "; ")
	}
	return models.E(kind, "", "%s", msg)
}

// refusalKind is the kind of a call the cloud refused, by its status, so
// that a door answers as the cloud did (a 409 of Nova's is a 409 of
// corral's); a cloud that did not answer, or failed, is Unavailable.
func refusalKind(status int) models.Kind {
	switch status {
	case http.StatusBadRequest:
		return models.Invalid
	case http.StatusForbidden:
		return models.Forbidden
	case http.StatusNotFound:
		return models.NotFound
	case http.StatusConflict:
		return models.Conflict
	}
	return models.Unavailable
}

// novaConfChanges are the nova.conf lines ("[section] option = value")
// that differ between settings a and b.
func novaConfChanges(a, b models.Settings) []string {
	var out []string
	for i := range models.SettingTable {
		row := &models.SettingTable[i]
		if !row.Equal(&a, &b) {
			out = append(out, fmt.Sprintf("[%s] %s = %s", row.Section, row.Option, row.Format(row.Get(&b))))
		}
	}
	return out
}

// exclusive runs f with a connection to the cloud, under the lock syncs
// take (so that no sync runs in the middle of a write), waiting a while
// for a running sync to end.
func (a *Applier) exclusive(ctx context.Context, f func(*Client) error) error {
	wait := a.Wait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		err := a.Syncer.exclusive(ctx, f)
		if !errors.Is(err, ErrBusy) {
			return err
		}
		if time.Now().After(deadline) {
			return models.E(models.Unavailable, "", "a sync of the cloud is running and has not ended within %s; nothing was sent: try again when it ends", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// exclusive runs f with a connection, under this replica's flag and the
// store's sync lock (ErrBusy while a sync or rollout runs).
func (s *Syncer) exclusive(ctx context.Context, f func(*Client) error) error {
	if err := s.claim(); err != nil {
		return err
	}
	defer s.unclaim()
	return s.locked(ctx, f)
}

// claim takes this replica's flag (ErrBusy when a sync, rollout or write
// holds it).
func (s *Syncer) claim() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return ErrBusy
	}
	s.running = true
	return nil
}

func (s *Syncer) unclaim() {
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
}

// locked runs f with a connection under the store's sync lock, which
// replicas share (ErrBusy while another holds it).
func (s *Syncer) locked(ctx context.Context, f func(*Client) error) error {
	release, ok, err := s.Store.TrySyncLock(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return ErrBusy
	}
	defer release()
	client, err := Connect(ctx, s.Options)
	if err != nil {
		return err
	}
	defer client.Close()
	return f(client)
}

// refuseUncarried refuses, before anything is sent, a write whose world
// differs from the live one in something the cloud's APIs cannot carry
// or corral's rollout does not plan yet (see carried): every refusal
// says why and what to do instead.
func refuseUncarried(live, next *models.World) error {
	var why []string
	for _, ch := range Diff(live, next) {
		if ch.Op != "changed" {
			if msg := carriedWhole(ch); msg != "" {
				why = append(why, msg)
			}
			continue
		}
		for _, f := range ch.Fields {
			if msg := carriedField(ch, f.Field); msg != "" {
				why = append(why, msg)
			}
		}
	}
	if !reflect.DeepEqual(consumerKeys(live), consumerKeys(next)) {
		why = append(why, "allocations are made by Nova when it schedules servers: corral does not write them to a cloud")
	}
	if len(why) > 0 {
		return models.E(models.Invalid, "changes", "connected to a cloud, corral cannot make this change, and nothing was sent: %s", strings.Join(why, "; "))
	}
	return nil
}

// carriedWhole says why an object added or removed cannot be rolled out,
// or "" when it can.
func carriedWhole(ch Change) string {
	verb := map[string]string{"added": "create", "removed": "delete"}[ch.Op]
	switch ch.Kind {
	case "aggregate", "flavor", "provider", "server_group":
		return "" // planned, or refused by the plan with its reason
	case "server":
		return fmt.Sprintf("server %s: servers are Nova's; corral does not %s them", ch.Name, verb)
	}
	return fmt.Sprintf("%s %s: corral does not %s %ss in the cloud yet", strings.ReplaceAll(ch.Kind, "_", " "), ch.Name, verb, ch.Kind)
}

// carriedField says why one changed field cannot be rolled out, or ""
// when it can: the rollout plans every field of aggregates, providers and
// flavors (and refuses, with its reason, what no API carries); flavors'
// sizes and server groups' policies get the reason here, before planning.
func carriedField(ch Change, field string) string {
	switch ch.Kind {
	case "aggregate", "provider":
		return ""
	case "flavor":
		if field == "vcpus" || field == "ram_mb" || field == "disk_gb" || field == "name" {
			return fmt.Sprintf("flavor %s: %s cannot change, because Nova's flavors are immutable: create a new flavor with the new size (and the same extra specs), move servers to it with a resize, then delete the old one", ch.Name, field)
		}
		return ""
	case "server_group":
		switch {
		case field == "policy" || strings.HasPrefix(field, "rules."):
			return fmt.Sprintf("server group %s: Nova cannot change a server group's policy or rules after it is created: create a new group with the new %s and rebuild its servers into it", ch.Name, field)
		case field == "members":
			return fmt.Sprintf("server group %s: Nova puts a server in a group only when the server is created: boot the server with --hint group=<uuid>", ch.Name)
		}
	case "server":
		return fmt.Sprintf("server %s: servers are Nova's; corral does not change their %s", ch.Name, field)
	}
	return fmt.Sprintf("%s %s: corral does not roll a change of %s out to the cloud yet", strings.ReplaceAll(ch.Kind, "_", " "), ch.Name, field)
}

// consumerKeys is what the world's consumers say, in a comparable form.
func consumerKeys(w *models.World) map[string]string {
	out := map[string]string{}
	for _, c := range w.Consumers {
		out[c.UUID] = fmt.Sprint(c.ProjectID, c.UserID, c.Allocations)
	}
	return out
}
