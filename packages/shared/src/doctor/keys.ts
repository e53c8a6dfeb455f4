/**
 * What the doctor keeps in memory per collection: a compact set of blob keys (8 bytes a key,
 * not the keys themselves), so that checking a collection of hundreds of thousands of
 * documents holds a few megabytes.
 */

/** Two FNV-1a hashes with different seeds, 32 and 21 bits, as one number below 2^53. */
export function hash53(key: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const ch = key.charCodeAt(i);
    a = Math.imul(a ^ ch, 0x01000193);
    b = Math.imul(b ^ ch, 0x01000193);
  }
  return (a >>> 0) * 2 ** 21 + ((b >>> 0) >>> 11);
}

/**
 * A set of keys by their 53-bit hashes: add every key, seal, then ask. Two keys may share a hash
 * (about 2^-53 for a pair), so `has` may answer true for a key never added: a check using it can
 * only miss a disagreement that way, never find one that is not there.
 */
export class KeySet {
  #items = new Float64Array(1024);
  #size = 0;
  #sealed = false;

  add(key: string): void {
    if (this.#sealed) throw new Error("KeySet: sealed");
    if (this.#size === this.#items.length) {
      const grown = new Float64Array(this.#items.length * 2);
      grown.set(this.#items);
      this.#items = grown;
    }
    this.#items[this.#size++] = hash53(key);
  }

  seal(): this {
    this.#items = this.#items.slice(0, this.#size).sort();
    this.#sealed = true;
    return this;
  }

  has(key: string): boolean {
    if (!this.#sealed) throw new Error("KeySet: seal it first");
    const h = hash53(key);
    let lo = 0;
    let hi = this.#items.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.#items[mid]!;
      if (v === h) return true;
      if (v < h) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  get size(): number {
    return this.#size;
  }
}

const UUID_V7 = /(?:^|\/)([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * When a blob was made, read from its key: the API names each version's blob by its job id, a
 * UUIDv7, whose first 48 bits are the instant in milliseconds (blobKeyFor). Null for a key
 * that does not end in one (not ours: never judged by age).
 */
export function blobKeyTime(key: string): number | null {
  const m = UUID_V7.exec(key);
  return m ? parseInt(m[1]! + m[2]!, 16) : null;
}
