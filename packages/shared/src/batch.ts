/**
 * Group commit: calls made during one turn of the event loop run together as one batch (for
 * SQLite, one transaction instead of one per request). If the batch throws, each item is run
 * alone so one bad item fails only its own caller.
 */
export function batched<T, R>(run: (items: T[]) => R[]): (item: T) => Promise<R> {
  let pending: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    if (process.env.DEBUG_BATCH) (globalThis as any).__batches = ((globalThis as any).__batches ?? 0) + 1, (globalThis as any).__items = ((globalThis as any).__items ?? 0) + batch.length;
    let results: R[];
    const t0 = performance.now();
    try {
      results = run(batch.map((p) => p.item));
      if (process.env.DEBUG_BATCH) (globalThis as any).__ms = ((globalThis as any).__ms ?? 0) + performance.now() - t0;
    } catch {
      for (const p of batch) {
        try {
          p.resolve(run([p.item])[0]!);
        } catch (err) {
          p.reject(err);
        }
      }
      return;
    }
    batch.forEach((p, i) => p.resolve(results[i]!));
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ item, resolve, reject });
    });
}
