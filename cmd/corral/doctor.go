package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	hdoctor "corral/handlers/doctor"
	core "corral/models/doctor"
	"corral/models/scheduling"
)

// errDoctorFindings makes `corral doctor` exit 1 after printing its
// report: an error-severity finding is not acknowledged.
type errDoctorFindings struct{ n int }

func (e errDoctorFindings) Error() string {
	return fmt.Sprintf("%d error finding(s) not acknowledged", e.n)
}

// cmdDoctor is `corral doctor --db D [--format text|json]`: every
// scheduling trap of the live world (models/doctor), with fixes and
// acknowledgements. Exit 0 when no error-severity finding is left
// unacknowledged, 1 otherwise.
func cmdDoctor(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	db := dbFlag(fs)
	format := fs.String("format", "text", "text or json")
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if err = noArgs(pos); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return badUsage("--format is text or json, not %q", *format)
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	r, err := hdoctor.Build(context.Background(), st)
	if err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err = enc.Encode(r); err != nil {
			return err
		}
	} else {
		writeDoctorText(stdout, r)
	}
	if r.Failing() {
		return errDoctorFindings{r.Counts[core.SeverityError]}
	}
	return nil
}

// writeDoctorText prints one block per finding, loudest first, and a
// summary line.
func writeDoctorText(w io.Writer, r *hdoctor.Report) {
	for _, e := range r.Findings {
		head := strings.ToUpper(string(e.Severity))
		if e.Acknowledged != nil {
			head = "ack " + string(e.Severity)
		}
		fmt.Fprintf(w, "%-7s %s: %s\n", head, e.Code, e.Detail)
		fmt.Fprintf(w, "        why: %s\n", e.Why)
		for _, c := range e.Fix {
			fmt.Fprintf(w, "        fix: %s\n", scheduling.DescribeChange(c))
		}
		if a := e.Acknowledged; a != nil {
			fmt.Fprintf(w, "        acknowledged by %s: %s\n", a.By, a.Reason)
		}
		fmt.Fprintf(w, "        key: %s\n", e.Key)
	}
	fmt.Fprintf(w, "%d finding(s): %d error, %d warning, %d info not acknowledged; %d acknowledged\n",
		len(r.Findings), r.Counts[core.SeverityError], r.Counts[core.SeverityWarning], r.Counts[core.SeverityInfo], r.Acknowledged)
}
