/**
 * Catalogs as earlier versions of docstore wrote them, before schemas had versions (their
 * user_version is 0), for the tests that open them with today's code: the SQL those versions
 * ran, frozen. Never edit it to follow the schema.
 */
import { readFileSync } from "node:fs";

const sql = (name: string) => readFileSync(new URL(`./old-catalogs/${name}`, import.meta.url), "utf8");

/** The first version's (commit f9416f6): the catalog and a prototype index in one file. */
export const FIRST_CATALOG_SQL = sql("first.sql");

/**
 * What the last unversioned version (commit 5b01045) ran on every open of catalog.sqlite is
 * migration 1 of CATALOG_SCHEMA, word for word (released migrations are never edited); the fs
 * blob store then made its table in the same file, and gave it `enc`, with this.
 */
export const LAST_UNVERSIONED_BLOBS_SQL = `CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
ALTER TABLE blobs ADD COLUMN enc INTEGER NOT NULL DEFAULT 0;`;
