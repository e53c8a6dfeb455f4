/** The command line: commands, their options and arguments, and what a failure exits with. */
import { Command, CommanderError, InvalidArgumentError } from "@commander-js/extra-typings";
import { ConnectionError, ProblemError } from "@docstore/client";
import { tokenHint, type Context } from "./context.ts";
import { UsageError } from "./load/mapping.ts";

/**
 * Exit codes: 0 all done, 1 something failed (a document, a request; for `doctor`, disagreements
 * remain unrepaired), 2 the command line was wrong.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const integer = (min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer of at least ${min}`);
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];

export interface Streams {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  onInterrupt?: (say: () => void) => void;
}

/** Runs one command line; resolves to the exit code. */
export async function run(argv: string[], io: Streams): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command()
    .name("docstore")
    .description("Load documents into docstore and look at what is inside.")
    .option("--url <url>", "the service (default: $DOCSTORE_URL, else http://127.0.0.1:8080)")
    .option("--token <token>", "bearer token (default: $DOCSTORE_TOKEN)")
    .option("--json", "machine-readable output: JSON on stdout, JSON lines for lists and progress")
    .option("--retries <n>", "tries again after 429 or 503 (honouring Retry-After) or a refused connection", integer(0), 5)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError();

  const context = (): Context => {
    const g = program.opts();
    return {
      url: g.url ?? io.env.DOCSTORE_URL ?? "http://127.0.0.1:8080",
      token: g.token ?? io.env.DOCSTORE_TOKEN,
      json: g.json === true,
      retries: g.retries,
      ...io,
    };
  };

  program
    .command("load")
    .description("load files, folders and globs, or each line of a JSONL file or row of a CSV file, and wait until they are indexed")
    .argument("[paths...]", "files, folders (recursively; hidden entries skipped) and globs")
    .requiredOption("-c, --collection <name>", "the collection to load into")
    .option("--jsonl <file>", 'one document a line: {"text" or "path", "doc_id", "metadata"}')
    .option("--csv <file>", "one document a row, with a header: text or path, doc_id, other columns as metadata")
    .option("--metadata <json>", "a JSON object of metadata for every document (a document's own wins)")
    .option(
      "--metadata-from <map>",
      "metadata keys from fields: key=field[:type], comma-separated or repeated; types string, int, number, bool, json, list",
      collect,
    )
    .option("--text-field <name>", "the field or column holding a text", "text")
    .option("--path-field <name>", "the field or column holding a file's path (relative to the JSONL or CSV file)", "path")
    .option("--id-field <name>", "the field or column holding the doc_id", "doc_id")
    .option("--concurrency <n>", "requests at once", integer(1), 4)
    .option("--batch-size <n>", "texts in one bulk request (at most 1000)", integer(1), 500)
    .option("--no-wait", "end once everything is accepted, without waiting for indexing")
    .option(
      "--state <file>",
      "the state file that makes the load resumable (default: one per service, collection and sources under $XDG_STATE_HOME/docstore or ~/.local/state/docstore)",
    )
    .action(async (paths, flags) => {
      // Each command's modules are loaded when it runs: a quick `ls` does not pay for the loader's.
      const { load } = await import("./commands/load.ts");
      code = await load(context(), paths, { ...flags, metadataFrom: flags.metadataFrom ?? [] });
    });

  program
    .command("search")
    .description("search chunks by text and metadata filter")
    .argument("<query...>", "the text to search for")
    .option("-c, --collection <name>", "a collection to search (repeat for several; default: all)", collect)
    .option("-k, --k <n>", "results wanted", integer(1))
    .option("-f, --filter <filter>", "metadata filter in encoded-query syntax, e.g. status=open^priority<=2")
    .action(async (words, flags) => {
      const { search } = await import("./commands/read.ts");
      code = await search(context(), words, { ...flags, collection: flags.collection ?? [] });
    });

  program
    .command("ls")
    .description("list collections with their counts, or a collection's documents with their status")
    .argument("[collection]")
    .option("--status <status>", "only documents with this status: queued, processing, ready, failed, or pending (queued or processing)")
    .option("-f, --filter <filter>", "only documents whose metadata match this filter")
    .action(async (collection, flags) => {
      const { ls } = await import("./commands/read.ts");
      code = await ls(context(), collection, flags);
    });

  program
    .command("status")
    .description("a document's status and details (exit code 1 when it failed)")
    .argument("<doc_id>", "a doc_id, or the file a document was loaded from (a path here, or its file name)")
    .requiredOption("-c, --collection <name>")
    .action(async (docId, flags) => {
      const { status } = await import("./commands/read.ts");
      code = await status(context(), docId, flags);
    });

  program
    .command("rm")
    .description("delete documents")
    .argument("<doc_ids...>", "doc_ids, or the files documents were loaded from (paths here, or file names)")
    .requiredOption("-c, --collection <name>")
    .action(async (ids, flags) => {
      const { rm } = await import("./commands/remove.ts");
      code = await rm(context(), ids, flags);
    });

  program
    .command("rm-collection")
    .description("delete a collection and all its documents (asks first)")
    .argument("<collection>")
    .option("-y, --yes", "do not ask", false)
    .action(async (name, flags) => {
      const { rmCollection } = await import("./commands/remove.ts");
      code = await rmCollection(context(), name, flags);
    });

  program
    .command("doctor")
    .description(
      "check that catalog, raw copies and index agree, and with --repair repair what does not (an admin token; exit code 1 while disagreements remain)",
    )
    .option("--repair", "repair what disagrees (default: report only)", false)
    .option("-c, --collection <name>", "check this collection only (default: every one the token may use)")
    .action(async (flags) => {
      const { doctor } = await import("./commands/doctor.ts");
      code = await doctor(context(), flags);
    });

  program
    .command("export")
    .description("a collection's documents and metadata as JSON lines, which load --jsonl reads back")
    .requiredOption("-c, --collection <name>")
    .option("-f, --filter <filter>", "only documents matching this filter")
    .option("-o, --output <file>", "write to a file instead of stdout")
    .action(async (flags) => {
      const { exportCollection } = await import("./commands/read.ts");
      code = await exportCollection(context(), flags);
    });

  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const json = program.opts().json === true;
    const say = (message: string, extra: object = {}) =>
      json ? io.stderr.write(`${JSON.stringify({ error: message, ...extra })}\n`) : io.stderr.write(`error: ${message}\n`);
    if (err instanceof UsageError) {
      say(err.message);
      return EXIT.usage;
    }
    if (err instanceof ProblemError) {
      const hint = tokenHint(context(), err.status);
      say(hint ? `${err.message}; ${hint}` : err.message, { problem: err.problem });
      return EXIT.failed;
    }
    if (err instanceof ConnectionError) {
      say(err.message);
      return EXIT.failed;
    }
    throw err;
  }
}
