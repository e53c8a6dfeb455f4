/** Runs the `docstore` command line as a child process, as a person or a batch job would. */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

export const CLI = path.resolve(import.meta.dirname, "../packages/cli/bin/docstore.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Written to stdin, which is then closed; stdin is closed at once without it. */
  input?: string;
  /** Called with the process once started (to kill it, for instance). */
  started?: (proc: ChildProcess) => void;
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return runProcess(process.execPath, [CLI, ...args], opts);
}

/** Runs `command` to its end, with PATH and `opts.env` as its whole environment; what it printed. */
export function runProcess(command: string, args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const proc = spawn(command, args, { cwd: opts.cwd, env: { PATH: process.env.PATH ?? "", ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  proc.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  proc.stdin.end(opts.input ?? "");
  opts.started?.(proc);
  return new Promise((resolve, reject) => {
    proc.once("error", reject);
    proc.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The last line of stdout as JSON: a `--json` command's summary. */
export function summaryOf(r: CliResult): any {
  const lines = r.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!);
}
