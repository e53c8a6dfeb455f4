import { randomBytes } from "node:crypto";
import type { Form } from "./http.ts";

export interface FilePart {
  name: string;
  filename: string;
  type: string;
  data: Uint8Array;
}

/** Quotes a name or filename for a Content-Disposition header (RFC 7578: quotes, CR and LF escaped). */
const quoted = (s: string) => `"${s.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}"`;

/** A multipart/form-data body of text fields and one file, encoded at once. */
export function multipart(fields: { name: string; value: string }[], file: FilePart): Form {
  const boundary = `----docstore${randomBytes(12).toString("hex")}`;
  const parts: Buffer[] = [];
  for (const f of fields)
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(f.name)}\r\n\r\n${f.value}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name=${quoted(file.name)}; filename=${quoted(file.filename)}\r\nContent-Type: ${file.type}\r\n\r\n`,
    ),
    Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
