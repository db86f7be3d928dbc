package cloud

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"corral/models"
	"corral/models/scheduling"
)

// RolloutReport says what a rollout did.
type RolloutReport struct {
	Plan *Plan
	// Drift lists, object by object and field by field, what the cloud
	// changed since the last sync; a rollout with drift sends nothing.
	// Drifts are the same with the last sync's value and the cloud's.
	Drift  []string
	Drifts []models.Drift
	Done   []Step
	Failed *Step
	Error  string
	// FailedStatus is the HTTP status the cloud answered the failed call
	// (0 when it did not answer).
	FailedStatus int
	NotDone      []Step
	Mirrored     []string // hosts whose Placement copy does not agree after the rollout
	UndoID       string   // the draft that undoes what was done (on failure)
	// NoUndo names, after a failure, what the calls done changed that the
	// undo draft cannot restore (a deleted server group's id, a flavor's
	// access), each with what to do by hand.
	NoUndo []string
	Sync   *SyncResult
}

// Rollout sends a plan to the cloud: it re-reads every object the plan
// touches and refuses on drift; then makes the calls in order, each
// audited, stopping at the first failure; checks that Placement mirrors
// the host memberships Nova changed; re-syncs; and on failure stores a
// draft that undoes what was done.
func (c *Client) Rollout(ctx context.Context, st RolloutStore, actor models.Actor, plan *Plan, connection string) (*RolloutReport, error) {
	r := &RolloutReport{Plan: plan}
	drift, err := c.drift(ctx, plan)
	if err != nil {
		return nil, err
	}
	if len(drift) > 0 {
		r.Drifts = drift
		for _, d := range drift {
			r.Drift = append(r.Drift, d.Text)
		}
		if plan.DraftID != "" {
			// The draft's rebase page shows what the cloud holds now beside
			// the draft's base, even once a sync has brought it in.
			_ = st.AuditCloudCall(context.WithoutCancel(ctx), actor, models.AuditRolloutDrift, "draft", plan.DraftID, plan.DraftName,
				map[string]any{"calls": len(plan.Steps)}, map[string]any{"drift": drift})
		}
		return r, nil
	}
	scoped, err := c.groupClients(ctx, plan)
	if err != nil {
		return nil, err
	}
	mirrorChecks := c.makeCalls(ctx, st, actor, plan, r, scoped)
	c.checkMirrors(ctx, mirrorChecks, r)
	// Bring the change in, whatever happened.
	res, err := Sync(ctx, st, c, actor, SyncOptions{Connection: connection})
	if err != nil {
		return r, fmt.Errorf("the rollout's calls were made but the re-sync failed: %w", err)
	}
	r.Sync = res
	if r.Failed != nil {
		if err := saveUndo(ctx, st, actor, r); err != nil {
			return r, err
		}
	}
	return r, nil
}

// makeCalls makes the plan's calls in order, each audited, stopping at the
// first failure; it returns the host membership calls Placement must
// mirror.
func (c *Client) makeCalls(ctx context.Context, st RolloutStore, actor models.Actor, plan *Plan, r *RolloutReport, scoped map[string]*gophercloud.ServiceClient) []Step {
	created := map[string]int64{}      // aggregate name → nova id
	createdUUID := map[string]string{} // aggregate name → nova's uuid
	var mirrorChecks []Step
	for i := range plan.Steps {
		s := plan.Steps[i]
		path := s.Path
		if strings.Contains(path, "{id}") {
			id, ok := created[s.Aggregate]
			if !ok {
				r.Failed, r.Error = &s, "the aggregate was not created"
				r.NotDone = plan.Steps[i+1:]
				break
			}
			path = strings.Replace(path, "{id}", fmt.Sprint(id), 1)
			s.Path, s.AggregateUUID = path, createdUUID[s.Aggregate]
		}
		if s.newAgg {
			if s.AggregateUUID = createdUUID[s.Aggregate]; s.AggregateUUID == "" {
				r.Failed, r.Error = &s, "the aggregate was not created"
				r.NotDone = plan.Steps[i+1:]
				break
			}
		}
		answer, callErr := c.call(ctx, &s, path, scoped)
		if callErr == nil && s.Kind == "create" {
			created[s.Aggregate] = answer["id"].(int64)
			createdUUID[s.Aggregate] = s.AggregateUUID
		}
		auditCall(ctx, st, actor, s, answer, callErr)
		if callErr != nil {
			r.Failed, r.Error = &s, callErr.Error()
			var se *ServiceError
			if errors.As(callErr, &se) {
				r.FailedStatus = se.Status()
			}
			r.NotDone = plan.Steps[i+1:]
			break
		}
		r.Done = append(r.Done, s)
		if s.Kind == "add_host" || s.Kind == "remove_host" {
			mirrorChecks = append(mirrorChecks, s)
		}
	}
	return mirrorChecks
}

// call makes one step's call at path; a create answers with the new
// aggregate's id and uuid (and notes the uuid on s).
func (c *Client) call(ctx context.Context, s *Step, path string, scoped map[string]*gophercloud.ServiceClient) (map[string]any, error) {
	switch s.Kind {
	case "create":
		var out struct {
			Aggregate NovaAggregate `json:"aggregate"`
		}
		if err := c.send(ctx, c.Compute, "POST", strings.TrimPrefix(path, "/"), s.Body, &out, 200); err != nil {
			return nil, err
		}
		s.AggregateUUID = out.Aggregate.UUID
		return map[string]any{"id": out.Aggregate.ID, "uuid": out.Aggregate.UUID}, nil
	case "placement_aggregates":
		return nil, c.providerAggregates(ctx, s, path)
	case "provider_traits":
		return nil, c.providerTraits(ctx, s, path)
	}
	return c.callMore(ctx, s, path, scoped)
}

// auditCall records one call with its answer (or its status).
func auditCall(ctx context.Context, st RolloutStore, actor models.Actor, s Step, answer map[string]any, callErr error) {
	status := "ok"
	if callErr != nil {
		status = callErr.Error()
	}
	var recorded any = answer
	if answer == nil {
		recorded = map[string]any{"status": status}
	}
	objType, objID := "aggregate", s.AggregateUUID
	switch s.Object {
	case "flavor", "server_group":
		objType, objID = s.Object, s.id
	case "provider":
		objType, objID = "provider", s.Provider
	case "trait", "resource_class", "quota":
		objType, objID = s.Object, s.Aggregate
	}
	_ = st.AuditCloudCall(context.WithoutCancel(ctx), actor, "rollout-call", objType, objID, s.Aggregate,
		map[string]any{"call": s.String(), "openstack": s.Openstack}, recorded)
}

// checkMirrors checks that Placement mirrors the host memberships Nova
// changed.
func (c *Client) checkMirrors(ctx context.Context, mirrorChecks []Step, r *RolloutReport) {
	for _, s := range mirrorChecks {
		var cur struct {
			Aggregates []string `json:"aggregates"`
		}
		if err := c.get(ctx, c.Placement, "resource_providers/"+s.Provider+"/aggregates", &cur); err != nil {
			r.Mirrored = append(r.Mirrored, fmt.Sprintf("%s: %v", s.Host, err))
			continue
		}
		uuid := s.AggregateUUID
		if uuid == "" {
			continue
		}
		if in := slices.Contains(cur.Aggregates, uuid); in != (s.Kind == "add_host") {
			r.Mirrored = append(r.Mirrored, fmt.Sprintf("nova %s %s for aggregate %s, but placement's provider %s says otherwise: member_of will not see it (nova-manage placement sync_aggregates repairs it)",
				strings.Replace(s.Kind, "_", " ", 1), s.Host, s.Aggregate, s.ProviderName))
		}
	}
}

// saveUndo stores the draft that undoes the calls done, last first (and
// what the failed call created before it failed), and names what no
// draft restores.
func saveUndo(ctx context.Context, st RolloutStore, actor models.Actor, r *RolloutReport) error {
	var undo []scheduling.Change
	if r.Failed != nil {
		undo = append(undo, r.Failed.created...)
	}
	for i := len(r.Done) - 1; i >= 0; i-- {
		s := r.Done[i]
		undo = append(undo, s.undo...)
		undo = append(undo, s.created...)
		if s.noUndo != "" {
			r.NoUndo = append(r.NoUndo, s.noUndo)
		} else if s.undo == nil && s.created == nil {
			r.NoUndo = append(r.NoUndo, "no draft undoes "+s.String()+": "+s.Openstack)
		}
	}
	if len(undo) == 0 {
		return nil
	}
	id, err := st.SaveDraft(ctx, actor, "undo partial rollout", undo)
	if err != nil {
		return fmt.Errorf("the rollout stopped and its undo draft could not be saved: %w", err)
	}
	r.UndoID = id
	return nil
}

// PlanDraft plans the rollout of a stored draft against the last sync. The
// store refuses a draft whose live objects changed since it touched them.
func PlanDraft(ctx context.Context, st DraftStore, draftID string) (*Plan, error) {
	name, changes, err := st.PendingDraft(ctx, draftID)
	if err != nil {
		return nil, err
	}
	kept, err := LoadKept(ctx, st)
	if err != nil {
		return nil, err
	}
	live, err := st.ExportWorld(ctx)
	if err != nil {
		return nil, err
	}
	p, err := PlanRollout(kept, live, changes)
	if err != nil {
		return nil, err
	}
	p.changes, p.DraftID, p.DraftName = changes, draftID, name
	return p, nil
}

// RolloutDraft rolls a planned draft out; when every call succeeded, the
// part without an API (settings) is applied to corral itself and the
// draft is done (deleted): the re-sync brought the rest in.
func (c *Client) RolloutDraft(ctx context.Context, st RolloutStore, actor models.Actor, p *Plan, connection string) (*RolloutReport, error) {
	rep, err := c.Rollout(ctx, st, actor, p, connection)
	if err != nil || len(rep.Drift) > 0 || rep.Failed != nil {
		return rep, err
	}
	var local []scheduling.Change
	for _, ch := range p.changes {
		if ch.Op == scheduling.OpSetSettings {
			local = append(local, ch)
		}
	}
	if len(local) > 0 {
		if _, err := st.Apply(ctx, actor, local); err != nil {
			return rep, fmt.Errorf("rolled out, but the settings could not be applied to corral: %w", err)
		}
	}
	return rep, st.DiscardDraft(ctx, actor, p.DraftID)
}
