"""Registers compute and placement in Keystone's catalog (RegionOne, all
three interfaces), as an operator does after bootstrap.
   catalog.py KEYSTONE_URL ADMIN_PASSWORD COMPUTE_URL PLACEMENT_URL"""
import sys

from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client

auth_url, password, compute, placement = sys.argv[1:5]
auth = v3.Password(auth_url=auth_url, username="admin", password=password, project_name="admin",
                   user_domain_id="default", project_domain_id="default")
ks = client.Client(session=session.Session(auth=auth))
for name, kind, url in (("nova", "compute", compute), ("placement", "placement", placement)):
    svc = ks.services.create(name=name, type=kind)
    for iface in ("public", "internal", "admin"):
        ks.endpoints.create(service=svc, url=url, interface=iface, region="RegionOne")
