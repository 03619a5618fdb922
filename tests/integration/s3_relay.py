#!/usr/bin/env python3
"""An HTTP relay in front of an S3 server on loopback that records each request's shape.

usage: s3_relay.py TARGET_PORT LOG_FILE [QUIET_S]

Prints its port on the first line. Every request is passed on to 127.0.0.1:TARGET_PORT as it came (the Host
header too, so SigV4 signatures still match) and answered with the server's reply. One line per request goes
to LOG_FILE, when its reply is sent:

    OP KEY OFFSET LENGTH STATUS PEAK

OP: PUT, CREATE (CreateMultipartUpload), PART (UploadPart), COMPLETE, ABORT, GET (no Range), RANGE, HEAD, LIST,
DELETE, OTHER. KEY: the path without the bucket. OFFSET, LENGTH: a RANGE's bytes, a PART's or PUT's body, a GET's
reply body (offset 0). PEAK: the most data requests (PART, PUT, GET, RANGE) of that key in flight at once so far,
this one included.

With QUIET_S > 0 each data request is held until no other data request has arrived for QUIET_S seconds, so every
request a client keeps in flight at once is in flight here together before any is answered: the peak per key
is then the client's own concurrency, whatever the timing of the server.
"""
import http.client
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

target, log_path = int(sys.argv[1]), sys.argv[2]
quiet = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
lock = threading.Condition()
in_flight, peak = {}, {}
last_arrival = [0.0]
log = open(log_path, "a", buffering=1)
local = threading.local()


def classify(method, query, headers):
    q = urllib.parse.parse_qs(query, keep_blank_values=True)
    if method == "PUT":
        return "PART" if "partNumber" in q else "PUT"
    if method == "POST":
        return "CREATE" if "uploads" in q else "COMPLETE" if "uploadId" in q else "OTHER"
    if method == "GET":
        if "list-type" in q or "prefix" in q:
            return "LIST"
        return "RANGE" if headers.get("Range") else "GET"
    return {"HEAD": "HEAD", "DELETE": "ABORT" if "uploadId" in q else "DELETE"}.get(method, "OTHER")


class Relay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def relay(self):
        url = urllib.parse.urlsplit(self.path)
        op = classify(self.command, url.query, self.headers)
        parts = url.path.lstrip("/").split("/", 1)
        key = urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        data = op in ("PART", "PUT", "GET", "RANGE")
        if data:
            with lock:
                in_flight[key] = in_flight.get(key, 0) + 1
                peak[key] = max(peak.get(key, 0), in_flight[key])
                last_arrival[0] = time.monotonic()
                lock.notify_all()
                while quiet > 0 and time.monotonic() - last_arrival[0] < quiet:
                    lock.wait(quiet - (time.monotonic() - last_arrival[0]))
        try:
            conn = getattr(local, "conn", None)
            if conn is None:
                conn = local.conn = http.client.HTTPConnection("127.0.0.1", target, timeout=120)
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for h, v in self.headers.items():
                if h.lower() not in ("expect", "connection"):
                    conn.putheader(h, v)
            conn.endheaders(body if n else None)
            resp = conn.getresponse()
            reply = resp.read()
            self.send_response(resp.status)
            for h, v in resp.getheaders():
                if h.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(h, v)
            length = resp.getheader("Content-Length") if self.command == "HEAD" else str(len(reply))
            self.send_header("Content-Length", length or "0")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply)
            status = resp.status
        finally:
            if data:
                with lock:
                    in_flight[key] -= 1
        offset, length = 0, len(body)
        if op == "RANGE":
            a, b = self.headers["Range"].split("=", 1)[1].split("-")
            offset, length = int(a), int(b) - int(a) + 1
        elif op == "GET":
            length = len(reply)
        log.write("%s %s %d %d %d %d\n" % (op, key, offset, length, status, peak.get(key, 0) if data else 0))

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = relay


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256    # a client opening many connections at once: none waits for a SYN retry

    def handle_error(self, request, client_address):
        pass


s = Server(("127.0.0.1", 0), Relay)
print(s.server_address[1], flush=True)
s.serve_forever()
