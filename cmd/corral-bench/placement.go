package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"corral/models"
)

// Debian's python3-placement: the API script and the schema tool.
const (
	placementAPI    = "/usr/bin/placement-api"
	placementManage = "/usr/bin/placement-manage"
	systemPython    = "/usr/bin/python3"
)

// placementInstalled reports whether the real Placement can run here.
func placementInstalled() bool {
	for _, p := range []string{placementAPI, placementManage, systemPython} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// realPlacement is a running upstream Placement on SQLite with noauth2.
type realPlacement struct {
	url string
	cmd *exec.Cmd
	log string
}

// preparePlacement writes its configuration, creates its schema with
// placement-manage and fills the database with world's providers,
// aggregates, traits and inventories directly: its API would take hours
// for 100,000 providers.
func preparePlacement(ctx context.Context, dir string, w *models.World) error {
	db := filepath.Join(dir, "placement.db")
	conf := fmt.Sprintf(`[DEFAULT]
debug = False
log_file = %s

[api]
auth_strategy = noauth2

[placement_database]
connection = sqlite:///%s
`, filepath.Join(dir, "placement.log"), db)
	if err := os.WriteFile(filepath.Join(dir, "placement.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, placementManage, "--config-file", filepath.Join(dir, "placement.conf"), "db", "sync").CombinedOutput()
	if err != nil {
		return fmt.Errorf("placement-manage db sync: %v: %s", err, out)
	}
	// Standard resource classes keep the ids Placement gives them at start
	// (their position in os_resource_classes.STANDARDS).
	out, err = exec.CommandContext(ctx, systemPython, "-c",
		"import json, os_resource_classes as o; print(json.dumps(o.STANDARDS))").Output()
	if err != nil {
		return fmt.Errorf("read os_resource_classes: %v", err)
	}
	var standards []string
	if err := json.Unmarshal(out, &standards); err != nil {
		return err
	}
	return loadPlacementDB(db, w, standards)
}

func loadPlacementDB(path string, w *models.World, standards []string) error {
	db, err := sql.Open("sqlite3", path+"?_journal_mode=WAL&_synchronous=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	l := &placementLoad{tx: tx, now: time.Now().UTC().Format("2006-01-02 15:04:05.000000"), w: w,
		classID: map[string]int{}, id: make(map[string]int, len(w.Providers)), traitID: map[string]int{}}
	for _, step := range []func() error{
		func() error { return l.classes(standards) }, l.providers, l.aggregates, l.traits, l.inventories,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// placementLoad writes a world into Placement's tables in one
// transaction, keeping the ids it gave classes, providers and traits.
type placementLoad struct {
	tx      *sql.Tx
	now     string
	w       *models.World
	classID map[string]int // resource class → its id
	id      map[string]int // provider uuid → its id
	traitID map[string]int // trait → its id
}

// exec prepares q and lets rows execute it for each row.
func (l *placementLoad) exec(q string, rows func(st *sql.Stmt) error) error {
	st, err := l.tx.Prepare(q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer st.Close()
	return rows(st)
}

// classes writes the standard resource classes, then the custom ones the
// world's inventories name.
func (l *placementLoad) classes(standards []string) error {
	now, classID := l.now, l.classID
	return l.exec("INSERT INTO resource_classes (created_at, id, name) VALUES (?, ?, ?)", func(st *sql.Stmt) error {
		for i, name := range standards {
			classID[name] = i
			if _, err := st.Exec(now, i, name); err != nil {
				return err
			}
		}
		next := 10000 // Placement numbers custom classes from here
		for _, p := range l.w.Providers {
			for rc := range p.Inventories {
				if _, ok := classID[rc]; !ok {
					classID[rc] = next
					if _, err := st.Exec(now, next, rc); err != nil {
						return err
					}
					next++
				}
			}
		}
		return nil
	})
}

// providers writes the providers with their roots and parents.
func (l *placementLoad) providers() error {
	now, id := l.now, l.id
	for i, p := range l.w.Providers {
		id[p.UUID] = i + 1
	}
	return l.exec(`INSERT INTO resource_providers (created_at, id, uuid, name, generation, root_provider_id, parent_provider_id)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, func(st *sql.Stmt) error {
		for i, p := range l.w.Providers {
			root := p.RootUUID
			if root == "" {
				root = p.UUID
			}
			var parent any
			if p.ParentUUID != nil {
				parent = id[*p.ParentUUID]
			}
			if _, err := st.Exec(now, i+1, p.UUID, p.Name, p.Generation, id[root], parent); err != nil {
				return err
			}
		}
		return nil
	})
}

// aggregates writes the aggregates and their members.
func (l *placementLoad) aggregates() error {
	now, id := l.now, l.id
	if err := l.exec("INSERT INTO placement_aggregates (created_at, id, uuid) VALUES (?, ?, ?)", func(st *sql.Stmt) error {
		for a, agg := range l.w.Aggregates {
			if _, err := st.Exec(now, a+1, agg.UUID); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return l.exec("INSERT OR IGNORE INTO resource_provider_aggregates (created_at, resource_provider_id, aggregate_id) VALUES (?, ?, ?)", func(st *sql.Stmt) error {
		for a, agg := range l.w.Aggregates {
			for _, m := range agg.Members {
				if _, err := st.Exec(now, id[m], a+1); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// traits writes the traits the providers carry, then who carries them.
func (l *placementLoad) traits() error {
	now, traitID := l.now, l.traitID
	if err := l.exec("INSERT INTO traits (created_at, id, name) VALUES (?, ?, ?)", func(st *sql.Stmt) error {
		for _, p := range l.w.Providers {
			for _, t := range p.Traits {
				if _, ok := traitID[t]; !ok {
					traitID[t] = len(traitID) + 1
					if _, err := st.Exec(now, traitID[t], t); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return l.exec("INSERT OR IGNORE INTO resource_provider_traits (created_at, trait_id, resource_provider_id) VALUES (?, ?, ?)", func(st *sql.Stmt) error {
		for i, p := range l.w.Providers {
			for _, t := range p.Traits {
				if _, err := st.Exec(now, traitID[t], i+1); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// inventories writes the providers' inventories with Placement's
// defaults for a zero max_unit, min_unit, step_size or ratio.
func (l *placementLoad) inventories() error {
	now, classID := l.now, l.classID
	return l.exec(`INSERT INTO inventories (created_at, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, func(st *sql.Stmt) error {
		for i, p := range l.w.Providers {
			for rc, inv := range p.Inventories {
				maxUnit := inv.MaxUnit
				if maxUnit == 0 {
					maxUnit = inv.Total
				}
				ratio := inv.AllocationRatio
				if ratio == 0 {
					ratio = 1
				}
				if _, err := st.Exec(now, i+1, classID[rc], inv.Total, inv.Reserved, max(inv.MinUnit, 1), maxUnit, max(inv.StepSize, 1), ratio); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// startPlacement runs placement-api (wsgiref, one request at a time, as
// the Debian package ships it) on a free loopback port.
func startPlacement(ctx context.Context, dir string) (*realPlacement, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "placement-api.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(placementAPI, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "OS_PLACEMENT_CONFIG_DIR="+dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &realPlacement{url: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, log: logPath}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.url + "/")
		if err == nil {
			resp.Body.Close()
			return p, nil
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.stop()
	log, _ := os.ReadFile(logPath)
	return nil, fmt.Errorf("placement-api did not answer: %s", bytes.TrimSpace(log[max(0, len(log)-2000):]))
}

func (p *realPlacement) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
