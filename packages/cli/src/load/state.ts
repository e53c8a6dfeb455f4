/**
 * The state file of a load: a journal of JSON lines, appended as the load goes, that a later
 * run of the same command reads to send only what is missing. Per item (its key) it records:
 * `sent` (the id and hashes, written before the request), `ok` (the service accepted that
 * version) and `done` (indexed or failed). A line cut short by a kill is ignored.
 */
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { homedir } from "node:os";
import path from "node:path";

export interface Hashes {
  /** sha256 of the bytes sent: a file's, or a text's UTF-8. */
  sha: string;
  /** sha256 of the metadata sent, as JSON. */
  meta: string;
}

export interface Entry {
  docId: string;
  /** Written before a request whose answer was not recorded: it may or may not have arrived. */
  sent?: Hashes;
  ok?: Hashes & { version: number };
  done?: { version: number; status: "ready" | "failed"; error?: string | null };
}

type Line =
  | ({ t: "sent"; key: string; id: string } & Hashes)
  | ({ t: "ok"; key: string; id: string; version: number } & Hashes)
  | { t: "done"; key: string; id: string; version: number; status: "ready" | "failed"; error?: string | null };

export const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

/** Where a command's state goes by default: one file per service, collection and sources. */
export function defaultStatePath(identity: unknown, env: NodeJS.ProcessEnv): string {
  const dir = env.XDG_STATE_HOME ? path.join(env.XDG_STATE_HOME, "docstore") : path.join(homedir(), ".local", "state", "docstore");
  return path.join(dir, `load-${sha256(JSON.stringify(identity)).slice(0, 16)}.jsonl`);
}

export class LoadState {
  readonly file: string;
  readonly entries = new Map<string, Entry>();
  #fd: number;

  constructor(file: string) {
    this.file = file;
    mkdirSync(path.dirname(file), { recursive: true });
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue;
      }
      this.#apply(line);
    }
    this.#fd = openSync(file, "a");
    // A line cut short by a kill gets its own line end, so that the next line parses.
    if (text !== "" && !text.endsWith("\n")) writeSync(this.#fd, "\n");
  }

  #apply(line: Line) {
    const entry = this.entries.get(line.key) ?? { docId: line.id };
    entry.docId = line.id;
    if (line.t === "sent") entry.sent = { sha: line.sha, meta: line.meta };
    else if (line.t === "ok") {
      entry.ok = { sha: line.sha, meta: line.meta, version: line.version };
      entry.sent = undefined;
      entry.done = undefined;
    } else if (line.t === "done") entry.done = { version: line.version, status: line.status, error: line.error };
    this.entries.set(line.key, entry);
  }

  /** Records lines and applies them; one write, so the lines of a batch land together. */
  record(lines: Line[]) {
    if (lines.length === 0) return;
    for (const line of lines) this.#apply(line);
    writeSync(this.#fd, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  }

  sent(key: string, id: string, h: Hashes): Line {
    return { t: "sent", key, id, ...h };
  }

  ok(key: string, id: string, h: Hashes, version: number): Line {
    return { t: "ok", key, id, version, ...h };
  }

  done(key: string, id: string, version: number, status: "ready" | "failed", error?: string | null): Line {
    return { t: "done", key, id, version, status, error };
  }

  close() {
    closeSync(this.#fd);
  }
}
