const COMMA = Buffer.from(",");

/**
 * The bytes of JSON.stringify(body), each element of its array members serialized and encoded
 * on its own. Serialized whole, one character past U+00FF in one text (a Greek letter) made the
 * whole answer a string of two-byte characters, slower to write and, for 100 documents of 1 KB,
 * larger than V8's largest ordinary heap object (mapped afresh for each answer), then copied
 * once more into bytes: 0.46-0.51 ms against 0.20-0.23 for such an answer
 * (bench/probes/json-answer.ts).
 */
export function jsonBytes(body: Record<string, unknown>): Buffer {
  const parts: Buffer[] = [];
  let next = "{";
  for (const [key, value] of Object.entries(body)) {
    if (!Array.isArray(value)) {
      const json = JSON.stringify(value);
      if (json === undefined) continue; // as JSON.stringify leaves out undefined, functions, symbols
      parts.push(Buffer.from(`${next}${JSON.stringify(key)}:${json}`));
    } else {
      parts.push(Buffer.from(`${next}${JSON.stringify(key)}:[`));
      for (let i = 0; i < value.length; i++) {
        if (i > 0) parts.push(COMMA);
        parts.push(Buffer.from(JSON.stringify(value[i]) ?? "null"));
      }
      parts.push(Buffer.from("]"));
    }
    next = ",";
  }
  parts.push(Buffer.from(next === "{" ? "{}" : "}"));
  return Buffer.concat(parts);
}
