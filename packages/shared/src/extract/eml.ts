/**
 * An e-mail message (RFC 822 / .eml) as text, parsed by postal-mime: the headers a reader
 * looks at first, the body, then one line per attachment. Attachments are listed, not
 * extracted: a PDF inside a mail is its own document if someone uploads it.
 */
import PostalMime, { type Address, type Attachment, type Email } from "postal-mime";
import { htmlToText } from "./html.ts";
import { joinSections, type Extracted } from "./types.ts";
import { ExtractionError } from "../errors.ts";

export async function extractEml(bytes: Uint8Array): Promise<Extracted> {
  const email = await parse(bytes);
  const headers = [
    header("From", formatAddresses(email.from ? [email.from] : [])),
    header("To", formatAddresses(email.to ?? [])),
    header("Cc", formatAddresses(email.cc ?? [])),
    // As the sender wrote it (their time zone), not postal-mime's UTC rewrite.
    header("Date", email.headers.find((h) => h.key === "date")?.value ?? email.date),
    header("Subject", email.subject),
  ].filter((line) => line !== undefined);
  // postal-mime fills `text` whenever the message has a text/plain part; an HTML-only message
  // gets our own HTML conversion, the same as an uploaded web page.
  const body = email.text?.trim() ? email.text : email.html ? htmlToText(email.html) : "";
  const attachments = email.attachments.filter((a) => !a.related).map(describe);

  const parts = [headers.join("\n"), normalise(body), attachments.map((a) => `Attachment: ${a}`).join("\n")];
  const extracted = joinSections([
    {
      text: parts
        .map((p) => p.trim())
        .filter(Boolean)
        .join("\n\n"),
      at: {},
    },
  ]);
  return attachments.length > 0 ? { ...extracted, attachments } : extracted;
}

async function parse(bytes: Uint8Array): Promise<Email> {
  try {
    return await PostalMime.parse(bytes);
  } catch (error) {
    // Only its nesting and header-size limits make postal-mime give up on a message.
    throw new ExtractionError(`corrupt e-mail: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

function header(name: string, value: string | undefined): string | undefined {
  const clean = value?.replace(/\s+/g, " ").trim();
  return clean ? `${name}: ${clean}` : undefined;
}

/** "Ann Lee <ann@example.com>, team: bob@example.com" */
function formatAddresses(addresses: Address[]): string {
  return addresses.map((a) => (a.group ? `${a.name}: ${a.group.map(mailbox).join(", ")}` : mailbox(a))).join(", ");
}

function mailbox(m: { name: string; address?: string | undefined }): string {
  if (!m.address) return m.name;
  return m.name && m.name !== m.address ? `${m.name} <${m.address}>` : m.address;
}

/** "report.pdf (application/pdf, 12 KB)" */
function describe(attachment: Attachment): string {
  const name = attachment.filename?.replace(/\s+/g, " ").trim() || "unnamed";
  return `${name} (${attachment.mimeType}, ${formatSize(sizeOf(attachment.content))})`;
}

function sizeOf(content: Attachment["content"]): number {
  return typeof content === "string" ? new TextEncoder().encode(content).length : content.byteLength;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n");
}
