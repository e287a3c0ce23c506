"""GET /metrics of a cluster, and one sample of it, for the metrics tests (standard library only).

    metrics.py fetch STATE_DIR OUT     writes the text (read-only token of STATE_DIR/keys)
    metrics.py value FILE SERIES       prints the sample of SERIES, name{labels} exactly as
                                       rendered, or "none"
    metrics.py is FILE SERIES WANT     exits 0 when the sample equals WANT (as numbers), else 1
"""
import sys
import urllib.request


def fetch(state, out):
    url = open(state + '/http').read().strip()
    token = open(state + '/keys/http-ro.token').read().strip()
    req = urllib.request.Request(url + '/metrics', headers={'Authorization': 'Bearer ' + token})
    with urllib.request.urlopen(req, timeout=30) as r:
        kind = r.headers.get('Content-Type', '')
        if not kind.startswith('text/plain'):
            sys.exit(f'metrics.py: /metrics answered {kind}, not text/plain')
        with open(out, 'wb') as f:
            f.write(r.read())


def value(path, series):
    for line in open(path):
        name, _, v = line.rstrip('\n').rpartition(' ')
        if name == series:
            return v
    return 'none'


if __name__ == '__main__':
    if len(sys.argv) == 4 and sys.argv[1] == 'fetch':
        fetch(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == 'value':
        print(value(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == 'is':
        v = value(sys.argv[2], sys.argv[3])
        sys.exit(0 if v != 'none' and float(v) == float(sys.argv[4]) else 1)
    else:
        sys.exit(__doc__)
