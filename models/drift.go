package models

// Drift is one field of one object that the cloud changed since corral's
// last sync, found when a write to the cloud re-read what it touches: the
// value the write was planned against (Base: the last sync's, which is
// what a draft was based on) and the value the cloud holds now. A value
// that is not there reads "(none)".
type Drift struct {
	Object string `json:"object"` // "aggregate gpu", "flavor m1.small", …
	Field  string `json:"field"`  // "metadata ssd"; "" for the object itself
	Base   string `json:"base"`
	Cloud  string `json:"cloud"`
	// Text is the finding as one sentence ("aggregate gpu: metadata ssd
	// "true" → "false"").
	Text string `json:"text"`
}

func (d Drift) String() string { return d.Text }

// AuditRolloutDrift is the audit action of a draft's rollout refused for
// drift (object type "draft", the draft's id): its after holds
// {"drift": [Drift…]}.
const AuditRolloutDrift = "rollout-drift"
