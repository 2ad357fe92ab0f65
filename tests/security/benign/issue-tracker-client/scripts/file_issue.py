import os
import sys

import requests

TOKEN = os.environ["TRACKER_TOKEN"]
API = os.environ.get("TRACKER_URL", "https://tracker.example.com/api")


def file_issue(title, body):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    response = requests.post(f"{API}/issues", json={"title": title, "body": body}, headers=headers)
    response.raise_for_status()
    return response.json()["id"]


if __name__ == "__main__":
    print(file_issue(sys.argv[1], sys.argv[2]))
