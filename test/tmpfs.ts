/**
 * A small tmpfs that a test mounts over a folder (the service's DATA_DIR, or a part of it), then
 * fills, grows, or turns read-only and back: a full or read-only disk without a real one.
 * Mounting needs root (CAP_SYS_ADMIN); `TMPFS_SKIP` says why a suite cannot run where it is
 * not allowed. A mount is unmounted when the test file ends (test/cleanup.ts), after the
 * services started later are stopped, whether the test passed or not; a mount still busy then
 * is detached lazily, so none is left behind.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { atFileEnd } from "./cleanup.ts";

function run(args: string[]): { ok: boolean; why: string } {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: "utf8" });
  if (r.error) return { ok: false, why: `${args[0]}: ${(r.error as NodeJS.ErrnoException).code ?? r.error.message}` };
  // The first line says it (mount adds a hint about dmesg after it).
  return { ok: r.status === 0, why: (r.stderr || r.stdout).trim().split("\n")[0] || `${args[0]} exited with ${r.status}` };
}

/** Why tmpfs mounts cannot be made here (the suites that need them skip, saying so), or null when they can. */
export const TMPFS_SKIP: string | null = (() => {
  if (process.platform !== "linux") return "skipped: a full or read-only DATA_DIR is simulated with a tmpfs mount, which needs Linux";
  if (process.getuid?.() !== 0)
    return "skipped: a full or read-only DATA_DIR is simulated with a tmpfs mount, which needs root (run the tests as root)";
  const probe = mkdtempSync(path.join(tmpdir(), "docstore-tmpfs-probe-"));
  try {
    const mounted = run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]);
    if (!mounted.ok) return `skipped: mounting a tmpfs is not allowed here (${mounted.why})`;
    run(["umount", probe]);
    return null;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

const FILLER = ".filler";

export class Tmpfs {
  readonly dir: string;
  #mounted = true;
  /** Whether a `fill` keeps the filesystem full (until stopped, or unmounted). */
  #filling = false;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Mounts a tmpfs of `sizeMb` over `dir` (made if needed); unmounted when the test file ends. */
  static mount(dir: string, sizeMb: number): Tmpfs {
    mkdirSync(dir, { recursive: true });
    const r = run(["mount", "-t", "tmpfs", "-o", `size=${sizeMb}m,mode=0755`, "tmpfs", dir]);
    if (!r.ok) throw new Error(`mount tmpfs on ${dir}: ${r.why}`);
    const fs = new Tmpfs(dir);
    atFileEnd(() => fs.unmount());
    return fs;
  }

  /** Bytes free, as statfs tells. */
  free(): number {
    const s = statfsSync(this.dir);
    return s.bavail * s.bsize;
  }

  /**
   * Writes a filler file until the filesystem refuses (ENOSPC), then keeps it full for as long
   * as the returned `stop` is not called: space the service frees meanwhile (a WAL truncated,
   * old index versions removed) is taken again every 100 ms.
   */
  fill(): { stop(): Promise<void> } {
    const top = () => {
      const fd = openSync(path.join(this.dir, FILLER), "a");
      const block = Buffer.alloc(64 * 1024, 0x5a);
      try {
        for (let size = block.length; size >= 512; ) {
          try {
            writeSync(fd, block, 0, size);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
            size /= 2; // the last pages: in smaller writes
          }
        }
      } finally {
        closeSync(fd);
      }
    };
    top();
    this.#filling = true;
    const loop = (async () => {
      while (this.#filling) {
        await sleep(100);
        if (this.#filling) top();
      }
    })();
    return {
      stop: async () => {
        this.#filling = false;
        await loop;
      },
    };
  }

  /** Grows (or shrinks) the filesystem in place; what is on it stays. */
  resize(sizeMb: number): void {
    const r = run(["mount", "-o", `remount,size=${sizeMb}m`, this.dir]);
    if (!r.ok) throw new Error(`remount ${this.dir} size=${sizeMb}m: ${r.why}`);
  }

  /**
   * Remounts read-only. The kernel refuses while a file is open for writing on it ("busy"), so
   * this tries again until a moment when none is (or `timeoutMs` passes).
   */
  async readOnly(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = run(["mount", "-o", "remount,ro", this.dir]);
      if (r.ok) return;
      if (Date.now() > deadline) throw new Error(`remount ${this.dir} read-only: ${r.why}`);
      await sleep(20);
    }
  }

  readWrite(): void {
    const r = run(["mount", "-o", "remount,rw", this.dir]);
    if (!r.ok) throw new Error(`remount ${this.dir} read-write: ${r.why}`);
  }

  /** Unmounts; once. A mount still in use is detached lazily (it goes when its last user does). */
  unmount(): void {
    if (!this.#mounted) return;
    this.#mounted = false;
    this.#filling = false;
    if (run(["umount", this.dir]).ok) return;
    const lazy = run(["umount", "-l", this.dir]);
    if (!lazy.ok) throw new Error(`umount ${this.dir}: ${lazy.why}`);
  }
}
