package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"corral/models"
	"corral/models/cloud"
	"corral/models/scheduling"
)

// cmdSettings is `corral settings import --db D nova.conf` and `corral
// settings export --db D`: the settings as nova.conf has them, both ways,
// with the sections and options of models.SettingTable.
func cmdSettings(args []string, stdout io.Writer) error {
	const want = "want: corral settings import --db D nova.conf, or corral settings export --db D"
	if len(args) == 0 {
		return badUsage(want)
	}
	switch args[0] {
	case "import":
		return cmdSettingsImport(args[1:], stdout)
	case "export":
		return cmdSettingsExport(args[1:], stdout)
	}
	return badUsage(want)
}

// cmdSettingsImport reads the options of nova.conf that the settings
// mirror and saves them through the one write path, as an audited
// set_settings change of the generation it read.
func cmdSettingsImport(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("settings import", flag.ContinueOnError)
	db := dbFlag(fs)
	pos, err := flags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badUsage("want one nova.conf file")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return models.E(models.Invalid, "nova.conf", "%v", err)
	}
	defer f.Close()
	conf, err := cloud.ParseNovaConf(f)
	if err != nil {
		return err
	}
	st, err := openStore(*db)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	cur, gen, err := st.GetSettings(ctx)
	if err != nil {
		return err
	}
	next, notes, err := cloud.SettingsFromNovaConf(cur, conf)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	o := scheduling.SettingsOverrideBetween(cur, next)
	if o == nil {
		fmt.Fprintln(stdout, "settings unchanged")
		return nil
	}
	change := scheduling.Change{Op: scheduling.OpSetSettings, Settings: o, Generation: &gen}
	if _, err := st.Apply(ctx, cliActor(), []scheduling.Change{change}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "settings saved")
	return nil
}

// cmdSettingsExport prints the nova.conf lines that say what the saved
// settings say; settings import reads them back.
func cmdSettingsExport(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("settings export", flag.ContinueOnError)
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
	cur, _, err := st.GetSettings(context.Background())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "# corral's scheduler settings (corral settings export). enabled_filters names")
	fmt.Fprintln(stdout, "# corral's host filters only: keep the cloud's others (ComputeFilter, …) around them.")
	for _, l := range models.NovaConfLines(cur) {
		fmt.Fprintln(stdout, l)
	}
	return nil
}
