#!/usr/bin/env python3
"""A listing-only S3 server on loopback for the listing benchmark.

It holds one bucket of N derived objects, DLIO's names of a dataset of N
files under PREFIX/train/ (PREFIX/train/img_III_of_N.npz, III zero-padded to
the digits of N), of SIZE bytes each (or, with --spread S, SIZE + a
deterministic 0..S by object: a catalog that must store every size), and
answers what `shardbench
catalog` asks of an S3 endpoint:

  HEAD /BUCKET                       200 (the preflight)
  GET  /BUCKET?list-type=2&...       ListObjectsV2: prefix, max-keys (1000 at
                                     most, as S3), start-after,
                                     continuation-token; keys in byte order
  HEAD /BUCKET/KEY                   200 with Content-Length SIZE for a key of
                                     the set, else 404 (spot checks)

Nothing is stored: a page is made from the key order (object i's key is a
function of i, and keys sort as their indices), so 50M objects cost no
memory. Requests are not authenticated (any signature is accepted). Anything
else is answered 501, and counted, so a benchmark sees a request it did not
expect.

usage: fake_s3.py --bucket B --prefix P --objects N [--size S] [--spread S] [--port-file F]
Prints "listening on http://127.0.0.1:PORT" (and writes PORT to F).
"""
import argparse
import http.server
import os
import signal
import sys
import threading
import urllib.parse


class Bucket:
    def __init__(self, name, prefix, objects, size, spread=0):
        self.name = name
        self.objects = objects
        self.size = size
        self.spread = spread
        self.head = f"{prefix}train/img_"
        self.tail = f"_of_{objects}.npz"
        self.width = len(str(objects))

    def size_of(self, i):
        if not self.spread:
            return self.size
        return self.size + (i * 2654435761 + 12345) % (self.spread + 1)

    def key(self, i):
        return f"{self.head}{i:0{self.width}d}{self.tail}"

    def lower_bound(self, text):
        """First index whose key is >= text (keys increase with the index)."""
        lo, hi = 0, self.objects
        while lo < hi:
            mid = (lo + hi) // 2
            if self.key(mid) < text:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def upper_bound(self, text):
        """First index whose key is > text."""
        lo, hi = 0, self.objects
        while lo < hi:
            mid = (lo + hi) // 2
            if self.key(mid) <= text:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def prefix_range(self, prefix):
        """[first, end) of the keys that start with prefix."""
        first = self.lower_bound(prefix)
        if not prefix:
            return first, self.objects
        # the first string after every string that starts with prefix
        last = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return first, self.lower_bound(last)

    def index_of(self, key):
        if not (key.startswith(self.head) and key.endswith(self.tail)):
            return -1
        digits = key[len(self.head):len(key) - len(self.tail)]
        if len(digits) != self.width or not digits.isdigit():
            return -1
        i = int(digits)
        return i if i < self.objects else -1


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bucket = None
    unexpected = 0
    pages = 0
    lock = threading.Lock()

    def log_message(self, fmt, *args):     # quiet: a page a millisecond
        pass

    def _reply(self, status, body=b"", ctype="application/xml", length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _unexpected(self):
        with Handler.lock:
            Handler.unexpected += 1
        sys.stderr.write(f"fake_s3: unexpected request {self.command} {self.path}\n")
        self._reply(501, b"<Error><Code>NotImplemented</Code></Error>")

    def _split(self):
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.lstrip("/").split("/", 1)
        name = urllib.parse.unquote(parts[0])
        key = urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
        return name, key, urllib.parse.parse_qs(url.query, keep_blank_values=True)

    def do_HEAD(self):
        name, key, _ = self._split()
        b = Handler.bucket
        if name != b.name:
            return self._reply(404)
        if not key:
            return self._reply(200)
        if b.index_of(key) < 0:
            return self._reply(404)
        return self._reply(200, ctype="application/octet-stream", length=b.size_of(b.index_of(key)))

    def do_GET(self):
        name, key, q = self._split()
        b = Handler.bucket
        if name != b.name:
            return self._reply(404, b"<Error><Code>NoSuchBucket</Code></Error>")
        if key or q.get("list-type", [""])[0] != "2":
            return self._unexpected()
        prefix = q.get("prefix", [""])[0]
        max_keys = min(int(q.get("max-keys", ["1000"])[0] or 1000), 1000)
        first, end = b.prefix_range(prefix)
        token = q.get("continuation-token", [""])[0]
        after = q.get("start-after", [""])[0]
        if token:
            first = max(first, int(token))
        elif after:
            first = max(first, b.upper_bound(after))
        last = min(end, first + max_keys)
        contents = "".join(f"<Contents><Key>{b.key(i)}</Key><Size>{b.size_of(i)}</Size></Contents>"
                           for i in range(first, last))
        more = last < end
        body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                f"<Name>{b.name}</Name><Prefix>{prefix}</Prefix><KeyCount>{last - first}</KeyCount>"
                f"<MaxKeys>{max_keys}</MaxKeys><IsTruncated>{'true' if more else 'false'}</IsTruncated>"
                + (f"<NextContinuationToken>{last}</NextContinuationToken>" if more else "")
                + contents + "</ListBucketResult>").encode()
        with Handler.lock:
            Handler.pages += 1
        self._reply(200, body)

    def do_PUT(self):
        self._unexpected()

    def do_POST(self):
        self._unexpected()

    def do_DELETE(self):
        self._unexpected()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bucket", required=True)
    ap.add_argument("--prefix", default="", help="key prefix of the dataset, ending with '/' (or empty)")
    ap.add_argument("--objects", type=int, required=True)
    ap.add_argument("--size", type=int, default=131072)
    ap.add_argument("--spread", type=int, default=0, help="sizes SIZE .. SIZE+SPREAD, by object")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    Handler.bucket = Bucket(a.bucket, a.prefix, a.objects, a.size, a.spread)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(f"{port}\n")
        os.replace(a.port_file + ".tmp", a.port_file)
    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        sys.stderr.write(f"fake_s3: {Handler.pages} pages served, {Handler.unexpected} unexpected requests\n")


if __name__ == "__main__":
    main()
