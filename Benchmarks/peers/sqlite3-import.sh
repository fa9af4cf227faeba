#!/bin/sh
# Imports the benchmark's people JSON with the sqlite3 shell's own JSON functions: json_each
# over the file, an upsert into a table keyed by `key`, WAL, synchronous = FULL, one transaction.
# Usage: sqlite3-import.sh PEOPLE.json DATABASE [SCORE_TYPE]  (the score's column type; REAL by
# default, NUMERIC for the values suite's money)
set -eu
file=$1
database=$2
score_type=${3:-REAL}
sqlite3 "$database" <<SQL
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE IF NOT EXISTS person (key TEXT PRIMARY KEY, givenName TEXT, familyName TEXT, email TEXT, city TEXT,
                                   born TEXT, score $score_type, active INTEGER, visits INTEGER, created TEXT);
BEGIN;
INSERT INTO person (key, givenName, familyName, email, city, born, score, active, visits, created)
SELECT value->>'key', value->>'givenName', value->>'familyName', value->>'email', value->>'city',
       value->>'born', value->>'score', value->>'active', value->>'visits', value->>'created'
FROM json_each(readfile('$file')) WHERE true
ON CONFLICT(key) DO UPDATE SET givenName = excluded.givenName, familyName = excluded.familyName, email = excluded.email,
  city = excluded.city, born = excluded.born, score = excluded.score, active = excluded.active, visits = excluded.visits,
  created = excluded.created;
COMMIT;
SQL
