#!/usr/bin/env python3
"""Checks a running master's HTTP API against docs/api.yaml (stdlib and python3-yaml only).

    http_openapi.py API.yaml STATE JOB

For every path and method of the document: calls it with the read-write token ({id} is JOB, a
finished job whose task 0 wrote output; {task} is 0; a POST body is the operation's example)
and checks the status is a documented success and the body has every required field with its
type (objects, arrays, allOf, nullable, enum); without a token it must get a documented 401
with the error shape (but for operations with `security: []`); with an id that does not exist,
a documented 404; and any other method gets 405 whose Allow header lists exactly the
documented methods.  Prints one line per check; exits 1 at the first mismatch."""
import json
import sys

import yaml

sys.path.insert(0, __import__("os").path.dirname(__file__))
import httpapi  # noqa: E402

METHODS = ["get", "post", "put", "patch", "delete"]


def resolve(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), ref
        node = doc
        for part in ref[2:].split("/"):
            node = node[part]
    return node


TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def check(doc, schema, value, where):
    schema = resolve(doc, schema)
    if "allOf" in schema:
        for s in schema["allOf"]:
            check(doc, s, value, where)
        return
    if value is None:
        if not schema.get("nullable"):
            raise AssertionError("%s: null, not nullable" % where)
        return
    t = schema.get("type")
    if t == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif t == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif t:
        ok = isinstance(value, TYPES[t])
    else:
        ok = True
    if not ok:
        raise AssertionError("%s: %r is not of type %s" % (where, value, t))
    if "enum" in schema and value not in schema["enum"]:
        raise AssertionError("%s: %r not in %s" % (where, value, schema["enum"]))
    if t == "object":
        for k in schema.get("required", []):
            if k not in value:
                raise AssertionError("%s: required field '%s' missing" % (where, k))
        for k, s in schema.get("properties", {}).items():
            if k in value:
                check(doc, s, value[k], "%s.%s" % (where, k))
    if t == "array":
        for i, v in enumerate(value):
            check(doc, schema.get("items", {}), v, "%s[%d]" % (where, i))


def expect(doc, op, status, headers, body, where, want=None):
    responses = op["responses"]
    if want is not None and status != want:
        raise AssertionError("%s: status %d, expected %d: %s" % (where, status, want, body[:300]))
    if str(status) not in responses:
        raise AssertionError("%s: status %d is not documented: %s" % (where, status, body[:300]))
    resp = resolve(doc, responses[str(status)])
    content = resp.get("content", {})
    ctype = headers.get("Content-Type", "").split(";")[0].strip()
    if content and ctype not in content:
        raise AssertionError("%s: Content-Type %s not documented (%s)" % (where, ctype,
                                                                         list(content)))
    if ctype == "application/json":
        check(doc, content[ctype].get("schema", {}), json.loads(body), where)
    for h in resp.get("headers", {}):
        if h not in headers and h.lower() not in {k.lower() for k in headers}:
            raise AssertionError("%s: header %s missing" % (where, h))
    print("ok %s -> %d" % (where, status))


def main():
    spec, state, job = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(spec) as f:
        doc = yaml.safe_load(f)
    assert doc["openapi"].startswith("3."), "not OpenAPI 3"
    global_sec = doc.get("security", [])
    for path, item in doc["paths"].items():
        real = path.replace("{id}", str(job)).replace("{task}", "0")
        missing = path.replace("{id}", "999999").replace("{task}", "0")
        documented = [m for m in METHODS if m in item]
        for m in documented:
            op = item[m]
            body = None
            rb = op.get("requestBody")
            if rb:
                body = json.dumps(rb["content"]["application/json"]["example"]).encode()
            where = "%s %s" % (m.upper(), path)
            status, headers, data = httpapi.request(state, m.upper(), real, body)
            if status // 100 != 2:
                raise AssertionError("%s: status %d: %s" % (where, status, data[:300]))
            expect(doc, op, status, headers, data.decode("utf-8", "replace"), where)
            if op.get("security", global_sec):
                status, headers, data = httpapi.request(state, m.upper(), real, body, "none")
                expect(doc, op, status, headers, data.decode(), where + " (no token)", 401)
            if missing != real:
                status, headers, data = httpapi.request(state, m.upper(), missing, body)
                expect(doc, op, status, headers, data.decode(), where + " (no such job)", 404)
        other = [m for m in METHODS if m not in item][0]
        status, headers, data = httpapi.request(state, other.upper(), real, None)
        if status != 405:
            raise AssertionError("%s %s: status %d, expected 405" % (other.upper(), path, status))
        allow = {a.strip() for a in headers.get("Allow", "").split(",")} - {"HEAD"}
        if allow != {m.upper() for m in documented}:
            raise AssertionError("%s: Allow %s, documented %s" % (path, sorted(allow),
                                                                  sorted(documented)))
        print("ok %s %s -> 405 (Allow: %s)" % (other.upper(), path, headers.get("Allow")))
    print("api.yaml: %d paths checked" % len(doc["paths"]))


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("MISMATCH: %s" % e, file=sys.stderr)
        sys.exit(1)
