import os

import psycopg

url = os.environ["DATABASE_URL"]
with psycopg.connect(url) as conn:
    conn.execute("CALL refresh_reports()")
