/**
 * The recovery of lost jobs, which each worker process runs on a timer (RECOVERY_INTERVAL_S):
 * a document that has been queued or processing for longer than the grace while no queue holds
 * its job (Redis restarted empty, or a job removed by hand) gets its job back. The doctor's
 * `job_lost` check, made cheap enough to run every minute: a catalog query by status and age
 * (indexed), one queue look-up per candidate, a bounded number a round. Several workers may run
 * it at once: resubmitting is idempotent (JobQueue.resubmit), a job that runs after its version
 * settled does nothing (the pipeline skips it), and two overlapping runs leave one copy of each
 * chunk (the index's chunk ids are deterministic).
 */
import type { Catalog, JobQueue } from "../ports.ts";
import type { Logger } from "../logger.ts";

export interface RecoveryPorts {
  catalog: Catalog;
  queue: JobQueue;
  logger: Pick<Logger, "info" | "warn">;
}

export interface RoundOptions {
  /** How long a document must have been queued or processing, unchanged, to be looked at. */
  lostAfterMs: number;
  /** Candidates looked at in one round, at most. */
  limit: number;
  /** Where the previous round stopped (null: from the oldest). */
  cursor: string | null;
}

const PAGE = 200;

/** One round: returns what it looked at, what it queued again, and where the next round resumes. */
export async function recoverLostJobs(
  ports: RecoveryPorts,
  options: RoundOptions,
): Promise<{ checked: number; resubmitted: number; cursor: string | null }> {
  const { catalog, queue } = ports;
  const before = new Date(Date.now() - options.lostAfterMs).toISOString();
  let cursor = options.cursor;
  let checked = 0;
  let resubmitted = 0;
  const size = Math.max(1, Math.min(PAGE, options.limit));
  for (let pages = Math.ceil(options.limit / size); pages > 0; pages--) {
    const page = await catalog.listPending(before, size, cursor);
    checked += page.items.length;
    const lost = await Promise.all(page.items.map(async (d) => !(await queue.isPending(d.jobId))));
    for (const [i, d] of page.items.entries()) {
      if (!lost[i]) continue;
      // Looked up again: a version indexed or replaced since the page was read needs no job.
      const now = await catalog.get(d.collection, d.docId);
      if (!now || now.version !== d.version || (now.status !== "queued" && now.status !== "processing")) continue;
      if (await queue.resubmit({ collection: d.collection, docId: d.docId, version: d.version, jobId: d.jobId })) {
        resubmitted++;
        ports.logger.info(
          { collection: d.collection, docId: d.docId, version: d.version, jobId: d.jobId, status: d.status, since: d.updatedAt },
          "queued a lost job again",
        );
      }
    }
    cursor = page.next;
    if (cursor === null) break;
  }
  return { checked, resubmitted, cursor };
}

export interface LostJobRecovery {
  /** Waits for a round in flight, and runs no more. */
  stop(): Promise<void>;
}

/**
 * A round every `intervalMs` (the next one `intervalMs` after the previous ends), each resuming
 * where the last stopped and starting over once it reached the end. A round that fails (Redis
 * or the catalog down) is logged and tried again at the next tick.
 */
export function startLostJobRecovery(
  ports: RecoveryPorts,
  options: { intervalMs: number; lostAfterMs: number; perRound?: number },
): LostJobRecovery {
  let cursor: string | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let round: Promise<void> = Promise.resolve();
  const tick = () => {
    round = recoverLostJobs(ports, { lostAfterMs: options.lostAfterMs, limit: options.perRound ?? 2000, cursor })
      .then(
        (r) => {
          cursor = r.cursor;
          if (r.resubmitted > 0) ports.logger.info({ checked: r.checked, resubmitted: r.resubmitted }, "recovered lost jobs");
        },
        (err: unknown) => ports.logger.warn({ err }, "lost-job recovery round failed; will retry"),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs).unref();
      });
  };
  timer = setTimeout(tick, options.intervalMs).unref();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await round;
    },
  };
}
