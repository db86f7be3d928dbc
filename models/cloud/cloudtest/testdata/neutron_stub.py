"""Nova's server listing asks Neutron for each server's ports and security
groups. corral reads nothing from Neutron and these tests boot no server
with a port, so an empty Neutron is enough: every list is empty.
   neutron_stub.py PORT"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Empty(BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        body = {}
        for name in ("ports", "security_groups", "networks", "floatingips"):
            if name.replace("_", "-") in path or name in path:
                body = {name: []}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Empty).serve_forever()
