/**
 * The soak (docs/reliability.md, "Load"), shared by test/soak.test.ts and bench/soak.ts: loader
 * clients load small texts (in bulk and one at a time, some of them again as new versions) and
 * files in several formats into many collections, while other clients search and fetch by
 * filter without pause, a few delete documents, and one deletes a whole collection. Every
 * answer and its latency is recorded, with the API's (and the workers') memory sampled
 * throughout; `auditSoak` (soak-audit.ts) then checks what the service holds against what it acknowledged.
 */
import { expect } from "vitest";
import { makeDocx, makePdf } from "@docstore/shared/testing";
import { until, type Service } from "./harness.ts";
import { rssMb } from "./soak-audit.ts";

export interface SoakOptions {
  /** Clients loading documents (64). */
  loaders: number;
  /** Small texts loaded (20,000), a fifth of them one at a time, the rest 50 a request. */
  texts: number;
  /** Files uploaded (200): plain text, Markdown, HTML, PDF and DOCX in turn. */
  files: number;
  /** Collections (20); the first is deleted whole once its documents are in. */
  collections: number;
  /** Clients searching, and fetching by filter, without pause (8 and 4). */
  searchers: number;
  fetchers: number;
  /** Clients deleting single documents (2), and how many each deletes at most. */
  deleters: number;
  deletions: number;
}

export const SOAK: SoakOptions = {
  loaders: 64,
  texts: 20_000,
  files: 200,
  collections: 20,
  searchers: 8,
  fetchers: 4,
  deleters: 2,
  deletions: 200,
};

export type Operation =
  | "bulk load"
  | "single load"
  | "file upload"
  | "search"
  | "filtered search"
  | "fetch by filter"
  | "delete document"
  | "delete collection";

export interface SoakFigures {
  seconds: number;
  /** Answers per operation, by status ("error" for no answer). */
  answers: Record<string, Record<string, number>>;
  latencyMs: Record<string, { p50: number; p99: number; max: number }>;
  requests: number;
  /** Answers other than the expected 2xx, and requests never answered. */
  errors: number;
  serverErrors: number;
  documentsAcknowledged: number;
  documentsDeleted: number;
  /** Seconds from the last load's answer until nothing was pending. */
  settleSeconds: number;
  /** Resident memory of the API process (MB): before, highest during the load and the audit, 5 s after the audit (or once come down, cameDown, 240 s at most). */
  apiRssMb: { before: number; peak: number; after: number };
  /** Highest resident memory of each worker process (MB), distributed mode. */
  workerPeakRssMb: number[];
  /** Examples of the unexpected answers, for the failure message. */
  unexpected: string[];
}

/** What the clients were told: per collection, each acknowledged document's marker (its latest version's), and what was deleted. */
export interface SoakLedger {
  collections: string[];
  deletedCollection: string;
  markers: Map<string, Map<string, string>>;
  deleted: Map<string, Set<string>>;
  /** Ends the memory sampling (auditSoak does, once the audit's searches are done). */
  stopSampling?: () => void;
}

/**
 * How long a request may go unanswered before it counts as lost: a guard against a hang, not a
 * speed check (the report prints each operation's latencies). Deleting a document in the
 * distributed mode has taken up to 115 s under this load (its LanceDB commit retried against
 * the workers' commits); a deletion cut off after its catalog row went would look lost.
 */
const GUARD_MS = 600_000;
const METADATA = (n: number) => ({ status: ["open", "closed", "pending"][n % 3], priority: 1 + (n % 4), sys_id: `S${n}` });
const FILLER = "replica outage billing cluster restart latency database index search runbook incident change network".split(" ");
const textFor = (marker: string, n: number) =>
  `record ${n} carries ${marker}. ${Array.from({ length: 24 }, (_, i) => FILLER[(n + i * 5) % FILLER.length]).join(" ")}`;

interface Task {
  collection: string;
  run: (client: Client) => Promise<void>;
}

class Client {
  readonly svc: Service;
  readonly record: (op: Operation, status: number | string, ms: number, detail?: string) => void;

  constructor(svc: Service, record: Client["record"]) {
    this.svc = svc;
    this.record = record;
  }

  async call(
    op: Operation,
    method: string,
    route: string,
    opts: { query?: Record<string, string | number>; json?: unknown; form?: FormData },
    expected = 200,
  ): Promise<any> {
    const url = new URL(route, this.svc.url);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { authorization: `Bearer ${this.svc.token}` };
    if (opts.json !== undefined) headers["content-type"] = "application/json";
    const started = performance.now();
    try {
      const res = await fetch(url, {
        method,
        headers,
        body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.form,
        signal: AbortSignal.timeout(GUARD_MS),
      });
      const text = await res.text();
      this.record(
        op,
        res.status,
        performance.now() - started,
        res.status === expected ? undefined : `${method} ${url.pathname}${url.search}: ${res.status} ${text.slice(0, 300)}`,
      );
      return res.status === expected ? JSON.parse(text) : undefined;
    } catch (err) {
      this.record(op, "error", performance.now() - started, `${method} ${url.pathname}: ${String((err as Error).cause ?? err)}`);
      return undefined;
    }
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
/** Runs the soak against a started service (embedded, or distributed with its workers) and waits until nothing is pending. */
export async function runSoak(
  svc: Service,
  options: SoakOptions = SOAK,
  log: (line: string) => void = () => {},
): Promise<{ figures: SoakFigures; ledger: SoakLedger }> {
  const prefix = `soak-${Date.now().toString(36)}`;
  const collections = Array.from({ length: options.collections }, (_, i) => `${prefix}-c${i}`);
  const [deletedCollection] = collections;
  const ledger: SoakLedger = {
    collections,
    deletedCollection: deletedCollection!,
    markers: new Map(collections.map((c) => [c, new Map()])),
    deleted: new Map(collections.map((c) => [c, new Set()])),
  };
  const answers: Record<string, Record<string, number>> = {};
  const latencies: Record<string, number[]> = {};
  const unexpected: string[] = [];
  const record = (op: Operation, status: number | string, ms: number, detail?: string) => {
    (answers[op] ??= {})[status] = (answers[op]![status] ?? 0) + 1;
    (latencies[op] ??= []).push(ms);
    if (detail !== undefined && unexpected.length < 20) unexpected.push(detail);
  };
  const acknowledge = (collection: string, docId: string, marker: string) => ledger.markers.get(collection)!.set(docId, marker);
  // Documents that no later task loads again: the deleters pick among them once acknowledged.
  const deletable: { collection: string; docId: string }[] = [];

  // The tasks: bulk loads of 50 texts (then 5 of them loaded again as new versions), single
  // texts, and files; the collection to be deleted first, then round-robin over the others.
  let serial = 0;
  const tasks: Task[] = [];
  const texts = Array.from({ length: options.texts }, (_, i) => ({ collection: collections[i % collections.length]!, n: i }));
  const byCollection = Map.groupBy(texts, (t) => t.collection);
  for (const [collection, items] of byCollection) {
    const singles = Math.floor(items.length / 5);
    for (const { n } of items.slice(0, singles)) {
      tasks.push({
        collection,
        run: async (client) => {
          const docId = `t${n}`;
          const marker = `mark${n}q${serial++}z`;
          const ok = await client.call(
            "single load",
            "POST",
            "/load_text_to_collection",
            { query: { collection_name: collection, doc_id: docId }, json: { text: textFor(marker, n), metadata: METADATA(n) } },
            202,
          );
          if (ok) {
            acknowledge(collection, docId, marker);
            deletable.push({ collection, docId });
          }
        },
      });
    }
    const bulk = items.slice(singles);
    for (let i = 0; i < bulk.length; i += 50) {
      const batch = bulk.slice(i, i + 50);
      tasks.push({
        collection,
        run: async (client) => {
          const documents = batch.map(({ n }) => ({ doc_id: `t${n}`, marker: `mark${n}q${serial++}z`, n }));
          const load = (docs: typeof documents) =>
            client.call(
              "bulk load",
              "POST",
              "/load_texts_to_collection",
              {
                query: { collection_name: collection },
                json: { documents: docs.map((d) => ({ doc_id: d.doc_id, text: textFor(d.marker, d.n), metadata: METADATA(d.n) })) },
              },
              202,
            );
          if (!(await load(documents))) return;
          for (const d of documents) acknowledge(collection, d.doc_id, d.marker);
          // Five of them again, as new versions (replaced while the first may still be indexing).
          const again = documents.slice(0, 5).map((d) => ({ ...d, marker: `mark${d.n}q${serial++}z` }));
          if (await load(again)) for (const d of again) acknowledge(collection, d.doc_id, d.marker);
          for (const d of documents.slice(5)) deletable.push({ collection, docId: d.doc_id });
        },
      });
    }
  }
  for (let f = 0; f < options.files; f++) {
    const collection = collections[f % collections.length]!;
    tasks.push({
      collection,
      run: async (client) => {
        const docId = `f${f}`;
        const marker = `filemark${f}q${serial++}z`;
        const { name, type, bytes } = await fileFor(f, textFor(marker, f));
        const form = new FormData();
        form.append("metadata", JSON.stringify(METADATA(f)));
        form.append("file", new Blob([bytes], { type }), name);
        if (
          await client.call(
            "file upload",
            "POST",
            "/load_document_to_collection",
            { query: { collection_name: collection, doc_id: docId }, form },
            202,
          )
        ) {
          acknowledge(collection, docId, marker);
          deletable.push({ collection, docId });
        }
      },
    });
  }
  // The collection to be deleted first; the rest shuffled (deterministically), so every kind of load runs all along.
  const first = tasks.filter((t) => t.collection === deletedCollection);
  const rest = tasks.filter((t) => t.collection !== deletedCollection);
  for (let i = rest.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  const queue = [...first, ...rest];
  let firstLeft = first.length;
  let collectionGone: () => void = () => {};
  const collectionDeleted = new Promise<void>((resolve) => (collectionGone = resolve));

  const client = new Client(svc, record);
  const apiPid = svc.proc.pid;
  const rss = { before: rssMb(apiPid), peak: 0, after: 0 };
  const workerPeaks = svc.workers.map(() => 0);
  const sampler = setInterval(() => {
    rss.peak = Math.max(rss.peak, rssMb(apiPid));
    svc.workers.forEach((w, i) => (workerPeaks[i] = Math.max(workerPeaks[i]!, rssMb(w.pid))));
  }, 200);
  const started = performance.now();
  let loading = true;
  let loadersDone = false;
  let loaded = 0;
  const progress = setInterval(
    () =>
      log(
        `  ${((performance.now() - started) / 1000).toFixed(0)} s: ${loaded} of ${tasks.length} load tasks done; API RSS ${rssMb(apiPid).toFixed(0)} MB`,
      ),
    10_000,
  );

  // The collections searched and fetched from: those with a document acknowledged (a collection exists from its first load), but the one deleted.
  const live = () => collections.filter((c) => c !== deletedCollection && ledger.markers.get(c)!.size > 0);
  const untilLive = async () => {
    while (loading && live().length === 0) await new Promise((r) => setTimeout(r, 50));
    return loading;
  };
  const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!;
  const words = FILLER;
  const loaders = Array.from({ length: options.loaders }, async () => {
    for (let task = queue.shift(); task; task = queue.shift()) {
      await task.run(client);
      loaded += 1;
      if (task.collection === deletedCollection && --firstLeft === 0) {
        // Its documents all answered: it goes, while the other collections go on loading.
        const body = await client.call("delete collection", "DELETE", "/delete_collection", {
          query: { collection_name: deletedCollection! },
        });
        if (body) expect(body.deleted).toBe(true);
        collectionGone();
      }
    }
  });
  const searchers = Array.from({ length: options.searchers }, async (_, i) => {
    while (await untilLive()) {
      const filtered = i % 2 === 1;
      const query: Record<string, string | number> = { query: `${pick(words)} ${pick(words)}`, k: 10 };
      // Half the searches in one collection, half over several.
      query.collection_names = i % 4 < 2 ? pick(live()) : [pick(live()), pick(live()), pick(live())].join(",");
      if (filtered) query.metadata = "status=open^priority<=2";
      await client.call(filtered ? "filtered search" : "search", "GET", "/get_relevant_documents", { query });
    }
  });
  const fetchers = Array.from({ length: options.fetchers }, async () => {
    while (await untilLive()) {
      await client.call("fetch by filter", "GET", "/get_content_by_tag", {
        query: { collection_name: pick(live()), tag_info: `status=${pick(["open", "closed", "pending"])}^ORDERBYDESCpriority`, limit: 50 },
      });
    }
  });
  let deletions = 0;
  const deleters = Array.from({ length: options.deleters }, async () => {
    await collectionDeleted;
    while (!loadersDone && deletions < options.deletions * options.deleters) {
      const candidates = deletable.filter((d) => d.collection !== deletedCollection);
      if (candidates.length === 0) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const victim = candidates.splice(Math.floor(Math.random() * candidates.length), 1)[0]!;
      deletable.splice(deletable.indexOf(victim), 1);
      deletions += 1;
      if (
        await client.call("delete document", "DELETE", "/delete_document_from_collection", {
          query: { collection_name: victim.collection, id_value: victim.docId },
        })
      ) {
        ledger.markers.get(victim.collection)!.delete(victim.docId);
        ledger.deleted.get(victim.collection)!.add(victim.docId);
      }
    }
  });
  await Promise.all(loaders);
  loadersDone = true;
  await Promise.all(deleters);
  const loadSeconds = (performance.now() - started) / 1000;
  // Searches and fetches go on until everything loaded is indexed.
  const settling = performance.now();
  await until(async () => {
    const r = await fetch(new URL("/get_list_of_collection", svc.url), { headers: { authorization: `Bearer ${svc.token}` } });
    const { collections: listed } = (await r.json()) as { collections: { name: string; pending: number }[] };
    return listed.filter((c) => c.name.startsWith(prefix)).every((c) => c.pending === 0);
  }, 1_200_000);
  const settleSeconds = (performance.now() - settling) / 1000;
  loading = false;
  await Promise.all([...searchers, ...fetchers]);
  clearInterval(progress);

  const latencyMs = Object.fromEntries(
    Object.entries(latencies).map(([op, ms]) => {
      const sorted = ms.sort((a, b) => a - b);
      return [op, { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 }];
    }),
  );
  const expected = (op: string) => (op.includes("load") || op === "file upload" ? "202" : "200");
  const counts = Object.entries(answers).flatMap(([op, byStatus]) => Object.entries(byStatus).map(([status, n]) => ({ op, status, n })));
  const figures: SoakFigures = {
    seconds: loadSeconds,
    answers,
    latencyMs,
    requests: counts.reduce((sum, c) => sum + c.n, 0),
    errors: counts.filter((c) => c.status !== expected(c.op)).reduce((sum, c) => sum + c.n, 0),
    serverErrors: counts.filter((c) => c.status === "error" || Number(c.status) >= 500).reduce((sum, c) => sum + c.n, 0),
    documentsAcknowledged:
      [...ledger.markers.values()].reduce((sum, m) => sum + m.size, 0) + [...ledger.deleted.values()].reduce((sum, s) => sum + s.size, 0),
    documentsDeleted: [...ledger.deleted.values()].reduce((sum, s) => sum + s.size, 0),
    settleSeconds,
    apiRssMb: rss,
    workerPeakRssMb: workerPeaks,
    unexpected,
  };
  return { figures, ledger: { ...ledger, stopSampling: () => clearInterval(sampler) } };
}

/** File f of the soak: plain text, Markdown, HTML, PDF or DOCX in turn, holding `text`. */
async function fileFor(f: number, text: string): Promise<{ name: string; type: string; bytes: Uint8Array }> {
  const utf8 = (s: string) => new TextEncoder().encode(s);
  switch (f % 5) {
    case 0:
      return { name: `f${f}.txt`, type: "text/plain", bytes: utf8(text) };
    case 1:
      return { name: `f${f}.md`, type: "text/markdown", bytes: utf8(`# File ${f}\n\n${text}\n`) };
    case 2:
      return {
        name: `f${f}.html`,
        type: "text/html",
        bytes: utf8(`<!doctype html><html><body><h1>File ${f}</h1><p>${text}</p></body></html>`),
      };
    case 3:
      return { name: `f${f}.pdf`, type: "application/pdf", bytes: await makePdf([[`File ${f}`, text]]) };
    default:
      return {
        name: `f${f}.docx`,
        type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        bytes: await makeDocx([{ heading: `File ${f}`, level: 1 }, { paragraph: text }]),
      };
  }
}

export { auditSoak, cameDown, rssMb, soakReport } from "./soak-audit.ts";
