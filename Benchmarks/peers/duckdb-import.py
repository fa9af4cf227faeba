"""Imports the benchmark's people JSON with DuckDB: read_json over the file, an upsert into a
table keyed by `key`. Usage: python3 duckdb-import.py PEOPLE.json DATABASE [SCORE_TYPE [BORN_TYPE]]
(pip install duckdb); the types default to DOUBLE and TIMESTAMP (the values suite's money: DECIMAL(18,2) DATE)."""
import sys

import duckdb

path, database = sys.argv[1], sys.argv[2]
score_type = sys.argv[3] if len(sys.argv) > 3 else "DOUBLE"
born_type = sys.argv[4] if len(sys.argv) > 4 else "TIMESTAMP"
connection = duckdb.connect(database)
connection.execute(
    f"""CREATE TABLE IF NOT EXISTS person (key VARCHAR PRIMARY KEY, givenName VARCHAR, familyName VARCHAR, email VARCHAR,
       city VARCHAR, born {born_type}, score {score_type}, active BOOLEAN, visits BIGINT, created TIMESTAMP)"""
)
connection.execute(
    f"""INSERT INTO person SELECT key, givenName, familyName, email, city, born, score, active, visits, created
       FROM read_json(?, format = 'array', columns = {{key: 'VARCHAR', givenName: 'VARCHAR', familyName: 'VARCHAR',
         email: 'VARCHAR', city: 'VARCHAR', born: '{born_type}', score: '{score_type}', active: 'BOOLEAN', visits: 'BIGINT',
         created: 'TIMESTAMP'}})
       ON CONFLICT (key) DO UPDATE SET givenName = excluded.givenName, familyName = excluded.familyName,
         email = excluded.email, city = excluded.city, born = excluded.born, score = excluded.score,
         active = excluded.active, visits = excluded.visits, created = excluded.created""",
    [path],
)
connection.close()
