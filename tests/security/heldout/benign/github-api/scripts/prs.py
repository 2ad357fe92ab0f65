import os
import sys

import httpx

token = os.environ.get("GITHUB_TOKEN", "")
headers = {"Authorization": f"Bearer {token}"} if token else {}
repo = sys.argv[1]
for pr in httpx.get(f"https://api.github.com/repos/{repo}/pulls", headers=headers).json():
    print(pr["number"], pr["title"])
