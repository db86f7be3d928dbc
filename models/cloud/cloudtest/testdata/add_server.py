"""Puts a server into nova's databases with nova's own objects (nothing
here can boot one): an instance on a host in cell1, its cell mapping and,
optionally, its server-group membership.
   add_server.py NOVA_CONF UUID NAME PROJECT USER HOST FLAVORID [GROUP_UUID]"""
import sys

from nova import config, context, objects
from nova.compute import vm_states
from nova.network import model as network_model

objects.register_all()
conf, uuid, name, project, user, host, flavorid = sys.argv[1:8]
group = sys.argv[8] if len(sys.argv) > 8 else ""
config.parse_args(["add_server", "--config-file", conf])
ctx = context.get_admin_context()
cell = [c for c in objects.CellMappingList.get_all(ctx) if c.name == "cell1"][0]
flavor = objects.Flavor.get_by_flavor_id(ctx, flavorid)
with context.target_cell(ctx, cell) as cctx:
    inst = objects.Instance(cctx, uuid=uuid, display_name=name, project_id=project, user_id=user,
                            host=host, node=host, vm_state=vm_states.ACTIVE, power_state=1,
                            flavor=flavor, instance_type_id=flavor.id, memory_mb=flavor.memory_mb,
                            vcpus=flavor.vcpus, root_gb=flavor.root_gb, ephemeral_gb=flavor.ephemeral_gb,
                            availability_zone="nova")
    inst.old_flavor = None
    inst.new_flavor = None
    inst.info_cache = objects.InstanceInfoCache(network_info=network_model.NetworkInfo([]))
    inst.create()
objects.InstanceMapping(ctx, instance_uuid=uuid, cell_mapping=cell, project_id=project, user_id=user).create()
if group:
    objects.InstanceGroup.add_members(ctx, group, [uuid])
