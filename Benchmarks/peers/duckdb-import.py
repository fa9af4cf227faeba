"""Imports the benchmark's people JSON with DuckDB: read_json over the file, an upsert into a
table keyed by `key`. Usage: python3 duckdb-import.py PEOPLE.json DATABASE (pip install duckdb)."""
import sys

import duckdb

path, database = sys.argv[1], sys.argv[2]
connection = duckdb.connect(database)
connection.execute(
    """CREATE TABLE IF NOT EXISTS person (key VARCHAR PRIMARY KEY, givenName VARCHAR, familyName VARCHAR, email VARCHAR,
       city VARCHAR, born TIMESTAMP, score DOUBLE, active BOOLEAN, visits BIGINT, created TIMESTAMP)"""
)
connection.execute(
    """INSERT INTO person SELECT key, givenName, familyName, email, city, born, score, active, visits, created
       FROM read_json(?, format = 'array', columns = {key: 'VARCHAR', givenName: 'VARCHAR', familyName: 'VARCHAR',
         email: 'VARCHAR', city: 'VARCHAR', born: 'TIMESTAMP', score: 'DOUBLE', active: 'BOOLEAN', visits: 'BIGINT',
         created: 'TIMESTAMP'})
       ON CONFLICT (key) DO UPDATE SET givenName = excluded.givenName, familyName = excluded.familyName,
         email = excluded.email, city = excluded.city, born = excluded.born, score = excluded.score,
         active = excluded.active, visits = excluded.visits, created = excluded.created""",
    [path],
)
connection.close()
