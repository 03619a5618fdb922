#!/usr/bin/env python3
"""Azure Blob requests signed with Shared Key by Python's standard library alone, written from Microsoft's
"Authorize with Shared Key" and "Create an account SAS" pages, independently of shardbench's C client: the tests
make their containers and SAS tokens with it, so a signature both this and the C client get accepted is checked
against two implementations and the server.

usage: az_shared_key.py container ENDPOINT ACCOUNT KEY NAME    create container NAME (an existing one is fine)
       az_shared_key.py sas ACCOUNT KEY                         print an account SAS token (blob service, all
                                                                resource types, read/write/delete/list/add/create,
                                                                valid for a day)
"""
import base64
import datetime
import hashlib
import hmac
import sys
import urllib.error
import urllib.parse
import urllib.request

VERSION = "2021-08-06"


def sign(key, text):
    return base64.b64encode(hmac.new(base64.b64decode(key), text.encode(), hashlib.sha256).digest()).decode()


def request(method, endpoint, account, key, path, query):
    """path: below the endpoint, already percent-encoded ("/container")."""
    url = urllib.parse.urlsplit(endpoint.rstrip("/"))
    full_path = url.path + path
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
    headers = {"x-ms-date": date, "x-ms-version": VERSION}
    canon_headers = "".join(f"{k}:{headers[k]}\n" for k in sorted(headers))
    canon_resource = f"/{account}{full_path}" + "".join(f"\n{k.lower()}:{query[k]}" for k in sorted(query))
    # VERB, Content-Encoding, -Language, -Length (empty for 0), -MD5, -Type, Date, If-Modified-Since, If-Match,
    # If-None-Match, If-Unmodified-Since, Range
    # urllib sends a Content-Type with any body: say it, and sign it
    ctype = "application/octet-stream" if method == "PUT" else ""
    to_sign = method + "\n" * 5 + ctype + "\n" * 7 + canon_headers + canon_resource
    headers["Authorization"] = f"SharedKey {account}:{sign(key, to_sign)}"
    target = f"{url.scheme}://{url.netloc}{full_path}?{urllib.parse.urlencode(query)}"
    if ctype:
        headers["Content-Type"] = ctype
    req = urllib.request.Request(target, method=method, headers=headers, data=b"" if method == "PUT" else None)
    try:
        with urllib.request.urlopen(req, timeout=30) as reply:
            return reply.status, ""
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("x-ms-error-code", "")


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "container":
        _, _, endpoint, account, key, name = sys.argv
        status, code = request("PUT", endpoint, account, key, "/" + urllib.parse.quote(name), {"restype": "container"})
        if status == 201 or code == "ContainerAlreadyExists":
            return 0
        print(f"az_shared_key: Create Container {name} on {endpoint}: HTTP {status} {code}", file=sys.stderr)
        return 1
    if len(sys.argv) == 4 and sys.argv[1] == "sas":
        _, _, account, key = sys.argv
        expiry = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        values = {"sp": "rwdlac", "ss": "b", "srt": "sco", "st": "", "se": expiry, "sip": "", "spr": "https,http",
                  "sv": "2019-12-12"}
        # account SAS before 2020-12-06: account, sp, ss, srt, st, se, sip, spr, sv, each followed by a newline
        to_sign = account + "\n" + "".join(values[k] + "\n" for k in ("sp", "ss", "srt", "st", "se", "sip", "spr", "sv"))
        values["sig"] = sign(key, to_sign)
        print(urllib.parse.urlencode({k: v for k, v in values.items() if v}))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


sys.exit(main())
