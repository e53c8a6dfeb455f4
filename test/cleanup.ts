/**
 * What a test file leaves to be undone when it ends, whether its tests passed or not: the
 * harness registers each service it starts and each folder it makes here, and test/setup.ts
 * runs them after the file's own hooks. (No vitest import: the benchmarks use the harness too,
 * and clean up after themselves.)
 */
const pending: (() => Promise<void> | void)[] = [];

export function atFileEnd(undo: () => Promise<void> | void): void {
  pending.push(undo);
}

/** Runs what was registered, the latest first; one failing does not stop the others. */
export async function runFileEnd(): Promise<void> {
  const errors: unknown[] = [];
  while (pending.length > 0) {
    try {
      await pending.pop()!();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, "cleaning up after the test file failed");
}
