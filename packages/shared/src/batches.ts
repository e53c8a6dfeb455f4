/**
 * Splits `items` into consecutive batches, in order, each within `max.items` items and
 * `max.cost` in total `cost`; an item that alone costs more than `max.cost` goes alone (whoever
 * receives it says why it is too large).
 */
export function packBatches<T>(items: Iterable<T>, cost: (item: T) => number, max: { items: number; cost: number }): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let total = 0;
  for (const item of items) {
    const c = cost(item);
    if (current.length > 0 && (current.length >= max.items || total + c > max.cost)) {
      batches.push(current);
      current = [];
      total = 0;
    }
    current.push(item);
    total += c;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
