/**
 * What `load` sends, one item a document: files named by paths, folders and globs, or the
 * lines of a JSONL file and the rows of a CSV file (each a text or a path to a file).
 */
import { createReadStream } from "node:fs";
import { glob, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { parse as parseCsv } from "csv-parse";
import { fileDocId } from "../file-id.ts";
import { UsageError, csvMetadata, mapFields, type FieldMap, type Metadata } from "./mapping.ts";

export interface Item {
  /** The item's identity in the state file: a file's absolute path, or the line or row it came from. */
  key: string;
  /** How messages name it: a path relative to the working folder, or `file:line`. */
  label: string;
  /** The doc_id the source gives. */
  docId?: string;
  /** The doc_id when neither the source nor metadata.sys_id gives one: a file's is made from its absolute path. */
  defaultId?: string;
  metadata: Metadata;
  text?: string;
  /** An absolute path: the item is a file to upload. */
  path?: string;
  /** Why the item cannot be sent (a malformed line); it is reported as failed. */
  error?: string;
}

export interface RecordFields {
  text: string;
  path: string;
  id: string;
}

export interface SourceOptions {
  /** Applied to every document; a record's own metadata wins. */
  metadata: Metadata;
  mapping: FieldMap[];
  fields: RecordFields;
}

const MAGIC = /[*?[\]{}]/;

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    // Hidden files and folders (.git, .DS_Store) are not documents.
    if (entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await walk(full, out);
    else if (entry.isFile()) out.push(full);
  }
}

/** The files that paths, folders (recursively, hidden entries skipped) and globs name, each once, in order. */
export async function expandPaths(args: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const arg of args) {
    const info = await stat(arg).catch(() => null);
    if (info?.isDirectory()) await walk(path.resolve(arg), files);
    else if (info?.isFile()) files.push(path.resolve(arg));
    else if (MAGIC.test(arg)) {
      const matched: string[] = [];
      for await (const f of glob(arg)) {
        const full = path.resolve(f);
        if ((await stat(full).catch(() => null))?.isFile()) matched.push(full);
      }
      if (matched.length === 0) throw new UsageError(`${arg}: no file matches`);
      files.push(...matched.sort());
    } else throw new UsageError(`${arg}: no such file or folder`);
  }
  return [...new Set(files)];
}

function fileFields(file: string): Record<string, string> {
  const rel = path.relative(process.cwd(), file);
  return { path: rel, name: path.basename(file), ext: path.extname(file).replace(/^\./, "").toLowerCase(), dir: path.dirname(rel) };
}

export function fileItems(files: readonly string[], opts: SourceOptions): Item[] {
  return files.map((file) => {
    const label = path.relative(process.cwd(), file) || file;
    // The same file gets the same id whichever command names it: loading it again replaces it.
    const item: Item = { key: file, label, path: file, defaultId: fileDocId(file), metadata: { ...opts.metadata } };
    try {
      Object.assign(item.metadata, mapFields(fileFields(file), opts.mapping, false));
    } catch (err) {
      item.error = (err as Error).message;
    }
    return item;
  });
}

/** An item from one line or row's fields; `base` is the folder relative paths start from. */
function recordItem(
  record: Record<string, unknown>,
  own: Metadata,
  base: string,
  key: string,
  label: string,
  opts: SourceOptions,
  fromText: boolean,
): Item {
  const { fields } = opts;
  const item: Item = { key, label, metadata: { ...opts.metadata, ...own } };
  const text = record[fields.text];
  const file = record[fields.path];
  const id = record[fields.id];
  if (id !== undefined && id !== "") {
    if (typeof id !== "string" && typeof id !== "number") return { ...item, error: `${fields.id}: expected a string` };
    item.docId = String(id);
    item.key = `${key.slice(0, key.lastIndexOf(":"))}#${item.docId}`;
  }
  const hasText = typeof text === "string" && text !== "";
  const hasPath = typeof file === "string" && file !== "";
  if (hasText === hasPath)
    return {
      ...item,
      error: `expected either "${fields.text}" (a text) or "${fields.path}" (a file), ${hasText ? "not both" : "found neither"}`,
    };
  if (hasText) item.text = text;
  else {
    item.path = path.resolve(base, file as string);
    item.defaultId = fileDocId(item.path);
  }
  try {
    Object.assign(item.metadata, mapFields(record, opts.mapping, fromText));
  } catch (err) {
    item.error = (err as Error).message;
  }
  return item;
}

/** Lines of a JSONL file: `{"text"|"path", "doc_id", "metadata", …}`; blank lines skipped. */
export async function* jsonlItems(file: string, opts: SourceOptions): AsyncGenerator<Item> {
  const abs = path.resolve(file);
  const name = path.relative(process.cwd(), abs) || abs;
  const lines = createInterface({ input: createReadStream(abs), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === "") continue;
    const key = `${abs}:${n}`;
    const label = `${name}:${n}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (err) {
      yield { key, label, metadata: {}, error: `not JSON: ${(err as Error).message}` };
      continue;
    }
    if (record === null || typeof record !== "object" || Array.isArray(record)) {
      yield { key, label, metadata: {}, error: "expected a JSON object" };
      continue;
    }
    const r = record as Record<string, unknown>;
    const own = r.metadata;
    if (own !== undefined && (own === null || typeof own !== "object" || Array.isArray(own))) {
      yield { key, label, metadata: {}, error: "metadata: expected a JSON object" };
      continue;
    }
    yield recordItem(r, (own ?? {}) as Metadata, path.dirname(abs), key, label, opts, false);
  }
}

function parseOwn(text: string): Metadata {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`metadata: not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("metadata: expected a JSON object");
  return value as Metadata;
}

/** Rows of a CSV file with a header; without --metadata-from, the other columns are metadata. */
export async function* csvItems(file: string, opts: SourceOptions): AsyncGenerator<Item> {
  const abs = path.resolve(file);
  const name = path.relative(process.cwd(), abs) || abs;
  const parser = createReadStream(abs).pipe(parseCsv({ columns: true, bom: true, skip_empty_lines: true, relax_column_count: true }));
  const skip = new Set([opts.fields.text, opts.fields.path, opts.fields.id, "metadata"]);
  let n = 1;
  for await (const row of parser as AsyncIterable<Record<string, string>>) {
    n++;
    const key = `${abs}:${n}`;
    const label = `${name}:${n}`;
    let own: Metadata = {};
    try {
      if (row.metadata) own = parseOwn(row.metadata);
      if (opts.mapping.length === 0) own = { ...csvMetadata(row, skip), ...own };
    } catch (err) {
      yield { key, label, metadata: {}, error: (err as Error).message };
      continue;
    }
    yield recordItem(row, own, path.dirname(abs), key, label, opts, true);
  }
}

/** Documents a JSONL or CSV file holds, counted before loading for the progress display. */
export async function countRecords(file: string, csv: boolean): Promise<number> {
  let n = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) if (line.trim() !== "") n++;
  // A CSV's header is not a document (and a quoted cell may span lines: the count is an estimate).
  return csv ? Math.max(0, n - 1) : n;
}
