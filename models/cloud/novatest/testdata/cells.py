"""What `nova-manage cell_v2 map_cell0`, `create_cell` and `discover_hosts`
store, written straight into the SQLite databases: each nova-manage run
imports all of Nova, which is most of a loaded machine's start-up time.
   cells.py map API_DB CELL0_URL CELL1_URL TRANSPORT_URL
   cells.py discover API_DB CELL1_DB"""
import datetime
import sqlite3
import sys
import uuid

now = datetime.datetime.utcnow().isoformat(sep=" ")
cmd, api = sys.argv[1], sqlite3.connect(sys.argv[2], timeout=20)
if cmd == "map":
    cell0, cell1, transport = sys.argv[3:6]
    api.execute("INSERT INTO cell_mappings (created_at, uuid, name, transport_url, database_connection, disabled)"
                " VALUES (?, '00000000-0000-0000-0000-000000000000', 'cell0', 'none:///', ?, 0)", (now, cell0))
    api.execute("INSERT INTO cell_mappings (created_at, uuid, name, transport_url, database_connection, disabled)"
                " VALUES (?, ?, 'cell1', ?, ?, 0)", (now, str(uuid.uuid4()), transport, cell1))
elif cmd == "discover":
    cell = sqlite3.connect(sys.argv[3], timeout=20)
    cell_id = api.execute("SELECT id FROM cell_mappings WHERE name = 'cell1'").fetchone()[0]
    for (host,) in cell.execute("SELECT DISTINCT host FROM compute_nodes WHERE mapped = 0 AND deleted = 0").fetchall():
        api.execute("INSERT OR IGNORE INTO host_mappings (created_at, cell_id, host) VALUES (?, ?, ?)", (now, cell_id, host))
    cell.execute("UPDATE compute_nodes SET mapped = 1 WHERE mapped = 0 AND deleted = 0")
    cell.commit()
else:
    sys.exit("unknown command " + cmd)
api.commit()
