"""Stand-ins for the services Nova asks that the scheduler does not need,
on one loopback port, told apart by path:
  /v2/...   Glance: the image schema and the images in images.json
  /v2.0/... Neutron: every list empty (servers boot with networks "none")
  /v3/...   Keystone: any project exists (nova-api checks quota reads)
   stubs.py PORT IMAGES_JSON"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

IMAGES = {i["id"]: i for i in json.load(open(sys.argv[2]))}
SCHEMA = {
    "name": "image",
    "properties": {
        "id": {"type": "string"}, "name": {"type": ["null", "string"]},
        "status": {"type": "string"}, "visibility": {"type": "string"},
        "protected": {"type": "boolean"}, "os_hidden": {"type": "boolean"},
        "checksum": {"type": ["null", "string"]}, "owner": {"type": ["null", "string"]},
        "size": {"type": ["null", "integer"]}, "virtual_size": {"type": ["null", "integer"]},
        "min_ram": {"type": "integer"}, "min_disk": {"type": "integer"},
        "disk_format": {"type": ["null", "string"]}, "container_format": {"type": ["null", "string"]},
        "created_at": {"type": "string"}, "updated_at": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "self": {"type": "string"}, "file": {"type": "string"}, "schema": {"type": "string"},
    },
    "additionalProperties": {"type": "string"},
    "links": [],
}


class Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        if path.startswith("/v2.0"):
            body = {}
            for name in ("ports", "security_groups", "networks", "floatingips", "extensions", "subnets"):
                if name.replace("_", "-") in path or name in path:
                    body = {name: []}
            return self.answer(200, body)
        if path.startswith("/v3/projects/"):
            pid = path.rsplit("/", 1)[1]
            return self.answer(200, {"project": {"id": pid, "name": pid, "domain_id": "default", "enabled": True,
                                                 "is_domain": False, "parent_id": "default"}})
        if path == "/v2/schemas/image":
            return self.answer(200, SCHEMA)
        if path.startswith("/v2/images/"):
            img = IMAGES.get(path.rsplit("/", 1)[1])
            if img is None:
                return self.answer(404, {"message": "no such image"})
            return self.answer(200, img)
        self.answer(404, {"message": "not here: " + path})

    def do_DELETE(self):
        self.answer(204, {})

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Stub).serve_forever()
