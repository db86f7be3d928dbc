"""Fills a stopped-or-idle Placement database with N compute-node providers
for the sync benchmark: each with VCPU, MEMORY_MB and DISK_GB inventory,
one instance's allocation, and every tenth in one of ten aggregates. Rows
go straight into Placement's own tables (creating 10,000 providers through
the API takes longer than the sync being measured); the sync then reads
them through the real API.
   populate_placement.py PLACEMENT_DB N PREFIX"""
import sqlite3
import sys
import uuid

import os_resource_classes as orc

db, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
VCPU, MEM, DISK = (orc.STANDARDS.index(c) for c in ("VCPU", "MEMORY_MB", "DISK_GB"))
con = sqlite3.connect(db)
cur = con.cursor()
now = "2026-01-01 00:00:00"
cur.execute("INSERT INTO projects (created_at, external_id) VALUES (?, ?)", (now, prefix + "project"))
project = cur.lastrowid
cur.execute("INSERT INTO users (created_at, external_id) VALUES (?, ?)", (now, prefix + "user"))
user = cur.lastrowid
aggs = []
for i in range(10):
    cur.execute("INSERT INTO placement_aggregates (created_at, uuid) VALUES (?, ?)", (now, str(uuid.uuid4())))
    aggs.append(cur.lastrowid)
for i in range(n):
    cur.execute("INSERT INTO resource_providers (created_at, uuid, name, generation) VALUES (?, ?, ?, 2)",
                (now, str(uuid.uuid4()), "%s%05d" % (prefix, i)))
    rp = cur.lastrowid
    cur.execute("UPDATE resource_providers SET root_provider_id = ? WHERE id = ?", (rp, rp))
    for rc, total in ((VCPU, 64), (MEM, 262144), (DISK, 2000)):
        cur.execute("INSERT INTO inventories (created_at, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio) "
                    "VALUES (?, ?, ?, ?, 0, 1, ?, 1, 1.0)", (now, rp, rc, total, total))
    consumer = str(uuid.uuid4())
    cur.execute("INSERT INTO consumers (created_at, uuid, project_id, user_id, generation) VALUES (?, ?, ?, ?, 1)", (now, consumer, project, user))
    for rc, used in ((VCPU, 4), (MEM, 8192), (DISK, 40)):
        cur.execute("INSERT INTO allocations (created_at, resource_provider_id, consumer_id, resource_class_id, used) VALUES (?, ?, ?, ?, ?)",
                    (now, rp, consumer, rc, used))
    if i % 10 == 0:
        cur.execute("INSERT INTO resource_provider_aggregates (created_at, resource_provider_id, aggregate_id) VALUES (?, ?, ?)",
                    (now, rp, aggs[(i // 10) % 10]))
con.commit()
