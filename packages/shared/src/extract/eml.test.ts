import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractEml, formatSize } from "./eml.ts";
import { ExtractionError } from "../errors.ts";

const eml = (lines: string[]) => new TextEncoder().encode(lines.join("\r\n"));
const base64Lines = (bytes: Uint8Array) =>
  Buffer.from(bytes)
    .toString("base64")
    .match(/.{1,76}/g) ?? [];

describe("extractEml", () => {
  it("reads a plain message: headers first, then the body", async () => {
    const message = eml([
      "From: Ann Lee <ann@example.com>",
      "To: Bob <bob@example.com>, carol@example.com",
      "Cc: Dan <dan@example.com>",
      "Date: Tue, 01 Apr 2025 10:00:00 +0200",
      "Subject: Quarterly",
      " numbers", // folded
      "Message-ID: <1@example.com>",
      "Content-Type: text/plain; charset=utf-8",
      "",
      "Hi Bob,",
      "",
      "the numbers are in.",
      "",
    ]);
    const text = [
      "From: Ann Lee <ann@example.com>",
      "To: Bob <bob@example.com>, carol@example.com",
      "Cc: Dan <dan@example.com>",
      "Date: Tue, 01 Apr 2025 10:00:00 +0200",
      "Subject: Quarterly numbers",
      "",
      "Hi Bob,",
      "",
      "the numbers are in.",
    ].join("\n");
    expect(await extractEml(message)).toEqual({ text, sections: [{ start: 0, end: text.length }] });
  });

  it("reads a multipart message: the text part, encoded words, and its attachments listed", async () => {
    const pdf = new Uint8Array(12 * 1024).fill(0x25);
    const message = eml([
      "From: =?ISO-8859-1?Q?Andr=E9_M=FCller?= <andre@example.com>",
      "To: team@example.com",
      `Subject: =?UTF-8?B?${Buffer.from("Grüße 🦊 report").toString("base64")}?=`,
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="mixed"',
      "",
      "--mixed",
      'Content-Type: multipart/alternative; boundary="alt"',
      "",
      "--alt",
      "Content-Type: text/plain; charset=utf-8",
      "Content-Transfer-Encoding: quoted-printable",
      "",
      "The report is attached. Caf=C3=A9 at 10.",
      "--alt",
      "Content-Type: text/html; charset=utf-8",
      "",
      "<p>The <b>report</b> is attached.</p>",
      "--alt--",
      "--mixed",
      'Content-Type: application/pdf; name="report.pdf"',
      'Content-Disposition: attachment; filename="report.pdf"',
      "Content-Transfer-Encoding: base64",
      "",
      ...base64Lines(pdf),
      "--mixed",
      "Content-Type: text/csv",
      "Content-Disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.csv",
      "Content-Transfer-Encoding: base64",
      "",
      "YSxi", // a,b
      "--mixed",
      "Content-Type: application/octet-stream",
      "Content-Disposition: attachment",
      "Content-Transfer-Encoding: base64",
      "",
      "AAECAw==",
      "--mixed--",
      "",
    ]);
    const result = await extractEml(message);
    expect(result.text).toBe(
      [
        "From: André Müller <andre@example.com>",
        "To: team@example.com",
        "Subject: Grüße 🦊 report",
        "",
        "The report is attached. Café at 10.",
        "",
        "Attachment: report.pdf (application/pdf, 12 KB)",
        "Attachment: résumé.csv (text/csv, 3 B)",
        "Attachment: unnamed (application/octet-stream, 4 B)",
      ].join("\n"),
    );
    expect(result.attachments).toEqual([
      "report.pdf (application/pdf, 12 KB)",
      "résumé.csv (text/csv, 3 B)",
      "unnamed (application/octet-stream, 4 B)",
    ]);
  });

  it("converts an HTML-only body with the HTML extractor and leaves out inline images", async () => {
    const message = eml([
      "From: news@example.com",
      "Subject: Launch",
      'Content-Type: multipart/related; boundary="rel"',
      "",
      "--rel",
      "Content-Type: text/html; charset=utf-8",
      "",
      '<html><body><nav>Home | About</nav><h1>We launched</h1><p>It went <a href="https://x.example">well</a>.</p><img src="cid:logo@x"></body></html>',
      "--rel",
      "Content-Type: image/png",
      "Content-ID: <logo@x>",
      'Content-Disposition: inline; filename="logo.png"',
      "Content-Transfer-Encoding: base64",
      "",
      "iVBORw0KGgo=",
      "--rel--",
      "",
    ]);
    const result = await extractEml(message);
    expect(result.text).toBe("From: news@example.com\nSubject: Launch\n\n# We launched\n\nIt went well.");
    expect(result.attachments).toBeUndefined();
  });

  it("formats sizes like a mail client", () => {
    expect([0, 1023, 1024, 12 * 1024 + 100, 5 * 1024 * 1024 + 300_000].map(formatSize)).toEqual([
      "0 B",
      "1023 B",
      "1 KB",
      "12 KB",
      "5.3 MB",
    ]);
  });

  it("never throws anything but ExtractionError on garbage", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (bytes) => {
        try {
          expect(typeof (await extractEml(bytes)).text).toBe("string");
        } catch (error) {
          expect(error).toBeInstanceOf(ExtractionError);
        }
      }),
      { numRuns: 200 },
    );
  });
});
