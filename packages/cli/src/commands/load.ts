/** `docstore load`: files, folders and globs, or the lines of a JSONL or CSV file, into a collection. */
import path from "node:path";
import { ConnectionError, ProblemError } from "@docstore/client";
import { clientOf, print, printJson, tokenHint, type Context } from "../context.ts";
import { UsageError, parseMapping, parseMetadataOption } from "../load/mapping.ts";
import { formatBytes } from "../format.ts";
import { Progress } from "../load/progress.ts";
import { Sender, FatalError } from "../load/send.ts";
import { countRecords, csvItems, expandPaths, fileItems, jsonlItems, type Item, type SourceOptions } from "../load/sources.ts";
import { LoadState, defaultStatePath } from "../load/state.ts";
import { Tracker } from "../load/tracker.ts";
import { Waiter } from "../load/wait.ts";

export interface LoadFlags {
  collection: string;
  jsonl?: string;
  csv?: string;
  metadata?: string;
  metadataFrom: string[];
  textField: string;
  pathField: string;
  idField: string;
  concurrency: number;
  batchSize: number;
  wait: boolean;
  state?: string;
}

/** Most bytes of text in one bulk request: well under the service's default MAX_BODY_BYTES (10 MiB). */
const BATCH_BYTES = 4 * 1024 * 1024;

async function sources(
  paths: string[],
  flags: LoadFlags,
  opts: SourceOptions,
): Promise<{ items: AsyncIterable<Item>; total: number; identity: unknown }> {
  const given = [paths.length > 0, flags.jsonl !== undefined, flags.csv !== undefined].filter(Boolean).length;
  if (given !== 1) throw new UsageError("load: give paths (files, folders, globs), or --jsonl FILE, or --csv FILE; exactly one of them");
  if (flags.jsonl !== undefined || flags.csv !== undefined) {
    const file = path.resolve((flags.jsonl ?? flags.csv)!);
    const csv = flags.csv !== undefined;
    const total = await countRecords(file, csv).catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`${flags.jsonl ?? flags.csv}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
    });
    return { items: csv ? csvItems(file, opts) : jsonlItems(file, opts), total, identity: { [csv ? "csv" : "jsonl"]: file } };
  }
  const files = await expandPaths(paths);
  const list = fileItems(files, opts);
  return {
    items: (async function* () {
      yield* list;
    })(),
    total: files.length,
    identity: { paths: paths.map((p) => path.resolve(p)) },
  };
}

export async function load(ctx: Context, paths: string[], flags: LoadFlags): Promise<number> {
  const opts: SourceOptions = {
    metadata: parseMetadataOption(flags.metadata),
    mapping: parseMapping(flags.metadataFrom),
    fields: { text: flags.textField, path: flags.pathField, id: flags.idField },
  };
  if (flags.batchSize < 1 || flags.batchSize > 1000)
    throw new UsageError("--batch-size: expected 1 to 1000 (the service's limit per request)");
  if (flags.concurrency < 1) throw new UsageError("--concurrency: expected at least 1");
  const { items, total, identity } = await sources(paths, flags, opts);
  const state = new LoadState(
    flags.state ?? defaultStatePath({ url: ctx.url, collection: flags.collection, ...(identity as object) }, ctx.env),
  );
  const tracker = new Tracker();
  tracker.total = total;
  const progress = new Progress(tracker, flags.wait, ctx.json ? "json" : ctx.stderr.isTTY ? "bar" : "plain", ctx.stderr);
  const client = clientOf(ctx, (r) => {
    tracker.retries++;
    progress.note(
      `${r.status ?? "connection refused"} on ${r.path}: trying again in ${(r.delayMs / 1000).toFixed(1)} s${r.retryAfter ? " (Retry-After)" : ""}`,
    );
  });
  if (!ctx.json) ctx.stderr.write(`loading ${total} documents into ${flags.collection} (state: ${state.file})\n`);
  progress.start();
  // Everything sent so far is in the state file (each line written before and after its request).
  ctx.onInterrupt?.(() => {
    progress.stop();
    const said = `interrupted: sent ${tracker.sent} documents, ${tracker.accepted} accepted; run the same command again to resume (state: ${state.file})`;
    ctx.stderr.write(
      ctx.json
        ? `${JSON.stringify({ event: "interrupted", sent: tracker.sent, accepted: tracker.accepted, state: state.file })}\n`
        : `${said}\n`,
    );
  });

  const sender = new Sender(client, state, tracker, items, {
    collection: flags.collection,
    concurrency: flags.concurrency,
    batchSize: flags.batchSize,
    batchBytes: BATCH_BYTES,
  });
  let sendingDone = false;
  let fatal: Error | undefined;
  // What stops the whole load (a refused token, an unreachable service, a lookup that failed):
  // the summary says it, and the same command run again carries on.
  const stopOn = (err: unknown) => {
    if (!(err instanceof FatalError || err instanceof ConnectionError || err instanceof ProblemError)) throw err;
    fatal ??= err;
    sender.stop();
  };
  const sending = sender
    .run()
    .catch(stopOn)
    .finally(() => {
      sendingDone = true;
      tracker.sendSeconds = tracker.elapsed();
    });
  const waiting = flags.wait
    ? new Waiter(client, state, tracker, flags.collection)
        .run(
          () => sendingDone,
          () => fatal !== undefined,
        )
        .catch(stopOn)
    : undefined;
  await Promise.all([sending, waiting]);
  progress.stop();
  state.close();
  summarize(ctx, tracker, flags, state.file, fatal);
  return fatal || tracker.failed > 0 ? 1 : 0;
}

const statusOf = (err: Error | undefined) => (err instanceof FatalError || err instanceof ProblemError ? err.status : undefined);

function summarize(ctx: Context, t: Tracker, flags: LoadFlags, stateFile: string, fatal: Error | undefined) {
  const seconds = t.elapsed();
  const rate = seconds > 0 ? t.settled(flags.wait) / seconds : 0;
  if (ctx.json) {
    printJson(ctx, {
      event: "summary",
      collection: flags.collection,
      total: t.total,
      sent: t.sent,
      bytes: t.sentBytes,
      accepted: t.accepted,
      indexed: flags.wait ? t.indexed : null,
      failed: t.failed,
      skipped: t.skipped,
      waiting: t.waiting(),
      retries: t.retries,
      seconds: Math.round(seconds * 100) / 100,
      send_seconds: t.sendSeconds === undefined ? null : Math.round(t.sendSeconds * 100) / 100,
      rate: Math.round(rate * 10) / 10,
      state: stateFile,
      failures: t.failures,
      ...(fatal ? { error: fatal.message } : {}),
      ...(tokenHint(ctx, statusOf(fatal)) ? { hint: tokenHint(ctx, statusOf(fatal)) } : {}),
    });
    return;
  }
  const outcome = flags.wait ? `${t.indexed} indexed` : `${t.accepted} accepted (not waiting for indexing)`;
  const skipped = t.skipped > 0 ? `, ${t.skipped} already loaded` : "";
  const speed = t.sent > 0 ? `, ${rate.toFixed(1)} docs/s` : "";
  print(
    ctx,
    `${fatal ? "stopped" : "done"} in ${seconds.toFixed(1)} s: ${outcome}, ${t.failed} failed${skipped}; sent ${t.sent} documents (${formatBytes(t.sentBytes)})${speed}`,
  );
  if (t.failures.length > 0) {
    print(ctx, "failed:");
    for (const f of t.failures)
      print(
        ctx,
        `  ${f.source}${f.doc_id ? ` (doc_id ${f.doc_id})` : ""}: ${f.stage === "indexing" ? "indexing failed: " : ""}${f.reason}`,
      );
  }
  if (fatal) print(ctx, `error: ${fatal.message}; run the same command again to send what is missing`);
  const hint = tokenHint(ctx, statusOf(fatal));
  if (hint) print(ctx, hint);
  print(ctx, `state: ${stateFile}`);
}
