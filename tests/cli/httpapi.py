#!/usr/bin/env python3
"""Tiny HTTP client for the HTTP API tests (t0210-t0216): stdlib only.

    httpapi.py STATE METHOD PATH [BODY] [--token rw|ro|none|VALUE] [--header 'K: V']...

reads the address from STATE/http and the token from STATE/keys/http.token (or http-ro.token),
prints the status on the first line, then the body.  Exit status 0 whatever the HTTP status;
2 when the server could not be reached."""
import http.client
import sys
import urllib.parse


def address(state):
    with open(state + "/http") as f:
        u = urllib.parse.urlparse(f.read().strip())
    return u.hostname, u.port


def token(state, which):
    if which in ("rw", "ro"):
        name = "http.token" if which == "rw" else "http-ro.token"
        with open(state + "/keys/" + name) as f:
            return f.read().strip()
    return None if which == "none" else which


def request(state, method, path, body=None, tok="rw", headers=None, timeout=60):
    host, port = address(state)
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    h = dict(headers or {})
    t = token(state, tok)
    if t is not None:
        h["Authorization"] = "Bearer " + t
    if body is not None and "Content-Type" not in h:
        h["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict(r.getheaders()), data


def main(argv):
    args, tok, headers = [], "rw", {}
    i = 1
    while i < len(argv):
        if argv[i] == "--token":
            tok = argv[i + 1]
            i += 2
        elif argv[i] == "--header":
            k, v = argv[i + 1].split(":", 1)
            headers[k.strip()] = v.strip()
            i += 2
        else:
            args.append(argv[i])
            i += 1
    state, method, path = args[:3]
    body = args[3].encode() if len(args) > 3 else None
    try:
        status, hdrs, data = request(state, method, path, body, tok, headers)
    except OSError as e:
        print("unreachable: %s" % e, file=sys.stderr)
        return 2
    print(status)
    for k, v in hdrs.items():
        print("%s: %s" % (k, v), file=sys.stderr)
    sys.stdout.write(data.decode("utf-8", "replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
