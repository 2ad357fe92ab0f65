import os
import subprocess

import requests

env = dict(os.environ)
env["PYTHONHASHSEED"] = "0"
result = subprocess.run(["pytest", "-q"], env=env, check=False)
port = env.get("DASHBOARD_PORT", "8080")
requests.post(f"http://localhost:{port}/results", json={"exit": result.returncode}, timeout=5)
