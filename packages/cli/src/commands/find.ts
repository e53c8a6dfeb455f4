/** Finds a document by what a person has at hand: its doc_id, or the file it was loaded from. */
import { existsSync } from "node:fs";
import path from "node:path";
import { ProblemError, type DocstoreClient } from "@docstore/client";
import { UsageError } from "../load/mapping.ts";
import { fileDocId } from "../file-id.ts";

const notFound = (err: unknown) => err instanceof ProblemError && err.status === 404;
/** 400: `given` cannot be a doc_id (a path, say). */
const notAnId = (err: unknown) => err instanceof ProblemError && err.status === 400;

/**
 * The doc_id that `given` names in `collection`: `given` itself when a document has that id;
 * else, for a file here, the id `load` gave it; else the one document whose file name is
 * `given`'s. Resolves to `given` when none matches and it can be a doc_id (its 404 then says
 * so), else fails with a 404; a name that several documents share is a UsageError listing them.
 */
export async function findDocId(client: DocstoreClient, collection: string, given: string): Promise<string> {
  let isId = true;
  try {
    await client.documentStatus(collection, given);
    return given;
  } catch (err) {
    if (notAnId(err)) isId = false;
    else if (!notFound(err)) throw err;
  }
  const file = path.resolve(given);
  if (existsSync(file)) {
    const id = fileDocId(file);
    try {
      await client.documentStatus(collection, id);
      return id;
    } catch (err) {
      if (!notFound(err)) throw err;
    }
  }
  const name = path.basename(given);
  const ids: string[] = [];
  try {
    for await (const d of client.documents(collection)) if (d.name === name) ids.push(d.doc_id);
  } catch (err) {
    if (!notFound(err)) throw err;
  }
  if (ids.length > 1)
    throw new UsageError(
      `${given}: ${ids.length} documents of ${collection} were loaded from files named ${name}: ${ids.join(", ")}; give one doc_id`,
    );
  if (ids[0] !== undefined || isId) return ids[0] ?? given;
  const detail = `no document of ${collection} was loaded from ${existsSync(file) ? file : `a file named ${name}`}`;
  throw new ProblemError({ type: "about:blank", title: "Not Found", status: 404, detail });
}
