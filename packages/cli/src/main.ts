/**
 * `docstore`: the command-line tool's entry point (started by bin/docstore.js), and the one place
 * it reads its environment (DOCSTORE_URL, DOCSTORE_TOKEN, DOCSTORE_CWD, XDG_STATE_HOME) and
 * process streams.
 */
import { run } from "./program.ts";

// `bash scripts/run.sh docstore …` and `pnpm docstore …` run in the workspace root: paths given
// are relative to the folder they were run from, which the first passes as DOCSTORE_CWD.
const from = process.env.DOCSTORE_CWD || (process.env.npm_lifecycle_event === "docstore" ? process.env.INIT_CWD : undefined);
if (from) process.chdir(from);
// A closed pipe (`docstore ls kb | head`) ends the output, not in a crash.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});

// 130 is what a shell reports for a program ended by SIGINT; a command may say something first.
const onInterrupt = (say: () => void) =>
  process.once("SIGINT", () => {
    say();
    process.exit(130);
  });

process.exitCode = await run(process.argv, {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  onInterrupt,
});
