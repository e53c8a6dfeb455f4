/**
 * How deep JSON from a client may nest. Nothing docstore takes nests deeper than four levels
 * (a bulk load's documents, metadata, an array value); JSON.parse reads any depth, but every
 * recursive step after it (validation, JSON.stringify for a message or for storage) overflows
 * the stack somewhere past a few thousand levels. So depth is checked on the text, first.
 */
export const MAX_JSON_DEPTH = 64;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The deepest nesting of `text` read as JSON, counted up to `limit + 1` (strings skipped). */
export function jsonDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Where the string opened at `open` closes: the next quote not escaped by an odd run of
 * backslashes (text.length if none). indexOf jumps over a document's text at native speed.
 */
function stringEnd(text: string, open: number): number {
  for (let from = open + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** The message for JSON nested deeper than MAX_JSON_DEPTH, or null when it is not. */
export function tooDeep(text: string): string | null {
  return jsonDepth(text) > MAX_JSON_DEPTH
    ? `JSON nested more than ${MAX_JSON_DEPTH} levels deep; accepted: at most ${MAX_JSON_DEPTH} levels`
    : null;
}
