import sqlite3
import sys

import boto3


def backup(path):
    copy = path + ".bak"
    with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    boto3.client("s3").upload_file(copy, "team-backups", copy)


backup(sys.argv[1])
