#!/usr/bin/env python3
"""Relay one TCP port to another on loopback and record every byte.

usage: tcp_capture.py LISTEN_PORT TARGET_PORT CAPTURE_FILE [HOST]

LISTEN_PORT 0 lets the kernel choose. HOST (default 127.0.0.1) is the loopback address it
listens on and relays to. Prints "ready PORT" once listening. Each connection is relayed both ways; all
bytes in either direction are appended to CAPTURE_FILE. Used by
test_security.sh to look at what crosses the wire. Stop it with SIGTERM.
"""
import selectors
import socket
import sys


def main():
    listen_port, target_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    host = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1"
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, listen_port))
    server.listen(16)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, None)
    peers = {}
    capture = open(path, "ab", buffering=0)
    print("ready", server.getsockname()[1], flush=True)
    while True:
        for key, _ in sel.select():
            sock = key.fileobj
            if sock is server:
                client, _ = server.accept()
                upstream = socket.create_connection((host, target_port))
                peers[client], peers[upstream] = upstream, client
                sel.register(client, selectors.EVENT_READ, None)
                sel.register(upstream, selectors.EVENT_READ, None)
                continue
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            other = peers.get(sock)
            if not data or other is None:
                for s in (sock, other):
                    if s is not None and s in peers:
                        sel.unregister(s)
                        peers.pop(s, None)
                        s.close()
                continue
            capture.write(data)
            other.sendall(data)


if __name__ == "__main__":
    main()
