/**
 * `docstore`: the command-line tool's entry point, and the one place it reads its
 * environment (DOCSTORE_URL, DOCSTORE_TOKEN, XDG_STATE_HOME) and process streams.
 */
import { run } from "./program.ts";

// `pnpm docstore …` runs in the workspace root: paths given are relative to where it was typed.
if (process.env.npm_lifecycle_event === "docstore" && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
// A closed pipe (`docstore ls kb | head`) ends the output, not in a crash.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

process.exitCode = await run(process.argv, { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin });
