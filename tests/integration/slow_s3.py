#!/usr/bin/env python3
# A slow, endless S3 bucket for listing tests: HEAD answers 200; every
# ListObjectsV2 page takes DELAY seconds and says IsTruncated with a new
# token, holding 100 keys ("keys" mode) or none ("empty" mode). Usage:
# slow_s3.py MODE DELAY; prints its port on the first line, then a line
# "page" for each page it answered (tests wait on those, not on the clock).
import sys, time, urllib.parse
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
mode, delay = sys.argv[1], float(sys.argv[2])
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_HEAD(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def do_GET(self):
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        prefix = q.get("prefix", [""])[0]
        n = int(q.get("continuation-token", ["0"])[0])
        time.sleep(delay)
        keys = "" if mode == "empty" else "".join(
            "<Contents><Key>%sobj-%012d</Key><Size>100</Size></Contents>" % (prefix, n + i) for i in range(100))
        body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>b</Name><Prefix>%s</Prefix>"
                "%s<IsTruncated>true</IsTruncated><NextContinuationToken>%d</NextContinuationToken></ListBucketResult>"
                % (prefix, keys, n + 100)).encode()
        self.send_response(200); self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        print("page", flush=True)
class S(ThreadingHTTPServer):
    def handle_error(self, request, client_address): pass   # a client that hung up: nothing to say
s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
