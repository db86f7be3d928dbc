package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"corral/models"
	"corral/models/scheduling"
)

// previewDoc is the input of `corral preview`: a world, one request and,
// optionally, the changes of a draft to judge the request against.
type previewDoc struct {
	World   json.RawMessage `json:"world"`
	Request json.RawMessage `json:"request"`
	Changes json.RawMessage `json:"changes"`
}

// previewResult is the trace; with changes it is the draft's trace plus the
// difference to the unchanged world (the shape of POST /api/preview?draft=).
type previewResult struct {
	*scheduling.Trace
	Diff      *scheduling.TraceDiff `json:"diff,omitempty"`
	DraftOnly []string              `json:"draft_only,omitempty"`
}

// runPreview is `corral preview [FILE]`: it reads {"world": …, "request": …}
// from FILE (stdin when absent or "-"), runs the request through the
// filtering core and writes the trace as JSON. Exit status 0 with a trace
// (even an unschedulable one, whose "error" says why), 2 with a one-line
// message naming the field for bad input, 1 when the trace cannot be
// written.
func runPreview(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "corral preview: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return code
	}
	if len(args) > 1 {
		return fail(2, errors.New("usage: corral preview [FILE]"))
	}
	in := stdin
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return fail(2, err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(bufio.NewReader(in))
	if err != nil {
		return fail(2, err)
	}
	tr, err := preview(data)
	if err != nil {
		code := 1
		if models.KindOf(err) == models.Invalid {
			code = 2
		}
		return fail(code, err)
	}
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tr); err != nil {
		return fail(1, err)
	}
	if err := w.Flush(); err != nil {
		return fail(1, err)
	}
	return 0
}

// preview decodes a preview document and runs it. Errors name the field
// from the document's root ("request.flavor", "world.aggregates[2]…").
func preview(data []byte) (*previewResult, error) {
	var doc previewDoc
	if err := models.DecodeStrict(data, "", &doc); err != nil {
		return nil, err
	}
	if len(doc.World) == 0 || string(doc.World) == "null" {
		return nil, models.E(models.Invalid, "world", "missing: a preview needs a world")
	}
	world, err := models.DecodeWorldJSON(doc.World, "world")
	if err != nil {
		return nil, err
	}
	spec := &scheduling.RequestSpec{NumInstances: 1}
	if len(doc.Request) > 0 && string(doc.Request) != "null" {
		if spec, err = scheduling.DecodeRequestJSON(doc.Request, "request"); err != nil {
			return nil, err
		}
	}
	liveSnap, err := scheduling.NewSnapshot(world)
	if err != nil {
		return nil, prefixField("world", err)
	}
	var draftSnap *scheduling.Snapshot
	if len(doc.Changes) > 0 && string(doc.Changes) != "null" {
		var changes []scheduling.Change
		if err = models.DecodeStrict(doc.Changes, "changes", &changes); err != nil {
			return nil, err
		}
		var drafted *models.World
		drafted, err = scheduling.ApplyChanges(world, changes)
		if err != nil {
			return nil, err
		}
		if draftSnap, err = scheduling.NewSnapshot(drafted); err != nil {
			return nil, prefixField("changes", err)
		}
	}
	p, err := scheduling.RunPreview(liveSnap, draftSnap, spec)
	if err != nil {
		return nil, prefixField("request", err)
	}
	return &previewResult{Trace: p.Trace, Diff: p.Diff, DraftOnly: p.DraftOnly}, nil
}

// prefixField puts an error's field under the document's section.
func prefixField(section string, err error) error {
	var ce *models.Error
	if !errors.As(err, &ce) {
		return err
	}
	c := *ce
	c.Field = models.JoinPath(section, c.Field)
	return &c
}
