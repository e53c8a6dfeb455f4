import { mkdir, readFile, rename, rm, writeFile, readdir, access } from "node:fs/promises";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { BlobStore } from "../ports.ts";
import { NotFoundError } from "../errors.ts";

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** Keys are `/`-separated segments of safe characters: a key can never leave the root. */
export function assertBlobKey(key: string): void {
  const segments = key.split("/");
  if (segments.length === 0 || !segments.every((s) => SEGMENT.test(s) && s !== "." && s !== "..")) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
}

/** Blobs as files under one folder; writes go through a temporary file and a rename. */
export class FsBlobStore implements BlobStore {
  readonly #root: string;
  readonly #madeDirs = new Set<string>();

  constructor(root: string) {
    this.#root = path.resolve(root);
  }

  #file(key: string): string {
    assertBlobKey(key);
    return path.join(this.#root, ...key.split("/"));
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const file = this.#file(key);
    const dir = path.dirname(file);
    if (!this.#madeDirs.has(dir)) {
      await mkdir(dir, { recursive: true });
      this.#madeDirs.add(dir);
    }
    const tmp = `${file}.${randomUUID()}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, file);
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      return await readFile(this.#file(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new NotFoundError(`blob ${key} not found`);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.#file(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<void> {
    const dir = this.#file(prefix.replace(/\/+$/, ""));
    for (const made of this.#madeDirs) if (made === dir || made.startsWith(dir + path.sep)) this.#madeDirs.delete(made);
    await rm(dir, { recursive: true, force: true });
  }

  async *list(prefix: string): AsyncIterable<string> {
    const base = this.#file(prefix.replace(/\/+$/, ""));
    let entries;
    try {
      entries = await readdir(base, { recursive: true, withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    for (const entry of entries) {
      if (!entry.isFile() || entry.name.endsWith(".tmp")) continue;
      const rel = path.relative(this.#root, path.join(entry.parentPath, entry.name));
      yield rel.split(path.sep).join("/");
    }
  }

  async ping(): Promise<void> {
    await mkdir(this.#root, { recursive: true });
    await access(this.#root);
  }
}
