import json
import sys


def merge(a, b):
    out = dict(a)
    for key, value in b.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and key in out else value
    return out


print(json.dumps(merge(*(json.load(open(p)) for p in sys.argv[1:3])), indent=2))
