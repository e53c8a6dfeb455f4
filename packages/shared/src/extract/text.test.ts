import { describe, expect, it } from "vitest";
import { ExtractionError } from "../errors.ts";
import { extractText } from "./text.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

describe("extractText: plain text and Markdown", () => {
  it("strips the byte order mark and normalises line endings", () => {
    const bytes = Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8("one\r\ntwo\rthree\n")]);
    expect(extractText(bytes, "text/plain")).toBe("one\ntwo\nthree\n");
  });

  it("decodes UTF-16 with a byte order mark, both byte orders", () => {
    const text = "Grüße 🦊\r\nzweite Zeile";
    const units = [...text].flatMap((c) => {
      const out: number[] = [];
      for (let i = 0; i < c.length; i++) out.push(c.charCodeAt(i));
      return out;
    });
    const le = Uint8Array.from([0xff, 0xfe, ...units.flatMap((u) => [u & 0xff, u >> 8])]);
    const be = Uint8Array.from([0xfe, 0xff, ...units.flatMap((u) => [u >> 8, u & 0xff])]);
    expect(extractText(le, "text/plain")).toBe("Grüße 🦊\nzweite Zeile");
    expect(extractText(be, "text/plain")).toBe("Grüße 🦊\nzweite Zeile");
  });

  it("decodes a legacy windows-1252 file", () => {
    expect(extractText(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]), "text/plain")).toBe("café €");
  });

  it("keeps Markdown as it is", () => {
    const markdown = "# Title\n\nSome *emphasis* and a [link](http://x.y).\n\n- item\n";
    expect(extractText(utf8(markdown), "text/markdown")).toBe(markdown);
  });

  it("returns an empty string when there is only whitespace", () => {
    expect(extractText(utf8(" \n\t\r\n "), "text/plain")).toBe("");
    expect(extractText(utf8("<html><body><script>x()</script>  </body></html>"), "text/html")).toBe("");
    expect(extractText(utf8("{}"), "application/json")).toBe("");
  });

  it("refuses bytes that are not text", () => {
    expect(() => extractText(Uint8Array.from([0, 1, 2, 3]), "text/plain")).toThrow(ExtractionError);
  });
});

describe("extractText: HTML", () => {
  const page = `<!doctype html>
<html><head><title>Ignored title</title><style>p { color: red }</style><script>var tracking = 1;</script></head>
<body>
  <header><a href="/">Home</a> | <a href="/about">About us</a></header>
  <nav><ul><li>Menu entry</li></ul></nav>
  <article>
    <header><h1>Resetting a password</h1><p>By the service desk</p></header>
    <h2>Before you <em>start</em></h2>
    <p>Open the <a href="https://example.com/portal">self-service portal</a> &amp; sign in.
    Then continue.</p>
    <ul><li>Have your badge</li><li>Have your phone</li></ul>
    <table><tr><th>Step</th><th>Action</th></tr><tr><td>1</td><td>Click reset</td></tr></table>
    <div role="navigation">Previous | Next</div>
  </article>
  <footer>Copyright 2024 Example Corp</footer>
  <script>evil()</script>
</body></html>`;
  const text = extractText(utf8(page), "text/html");

  it("keeps headings as their own Markdown lines", () => {
    expect(text).toContain("# Resetting a password\n");
    expect(text).toContain("\n## Before you start\n");
  });

  it("keeps the text of links but not their URLs", () => {
    expect(text).toContain("Open the self-service portal & sign in. Then continue.");
    expect(text).not.toContain("example.com");
  });

  it("drops scripts, styles, navigation, page header and footer", () => {
    for (const noise of ["tracking", "evil", "color", "Menu entry", "About us", "Copyright", "Previous", "Ignored title"]) {
      expect(text).not.toContain(noise);
    }
  });

  it("keeps an article's own header, lists and table rows", () => {
    expect(text).toContain("By the service desk");
    expect(text).toContain("- Have your badge\n- Have your phone");
    expect(text).toContain("Step | Action\n1 | Click reset");
  });

  it("reads only <main> when the page has one", () => {
    const html = "<body><div>Sidebar teaser</div><main><h3>Answer</h3><p>Reboot it.</p></main></body>";
    expect(extractText(utf8(html), "text/html")).toBe("### Answer\n\nReboot it.");
  });

  it("does not wrap long lines", () => {
    const sentence = "word ".repeat(60).trim();
    expect(extractText(utf8(`<p>${sentence}</p>`), "text/html")).toBe(sentence);
  });
});

describe("extractText: JSON and NDJSON", () => {
  it("renders key: value lines with nested paths and flattened arrays", () => {
    const json = JSON.stringify({
      title: "Printer offline",
      priority: 2,
      flag: false,
      caller: { name: "Ann", location: { site: "Berlin" } },
      tags: ["printer", "network"],
      notes: null,
      empty: "",
      comments: [
        { author: "bob", text: "rebooted" },
        { author: "eve", text: "fixed" },
      ],
    });
    expect(extractText(utf8(json), "application/json")).toBe(
      [
        "title: Printer offline",
        "priority: 2",
        "flag: false",
        "caller.name: Ann",
        "caller.location.site: Berlin",
        "tags: printer, network",
        "comments.author: bob",
        "comments.text: rebooted",
        "",
        "comments.author: eve",
        "comments.text: fixed",
      ].join("\n"),
    );
  });

  it("unescapes strings", () => {
    expect(extractText(utf8('{"msg": "caf\\u00e9 \\"quoted\\"\\nnext line"}'), "application/json")).toBe('msg: café "quoted"\nnext line');
  });

  it("renders a top-level array of records as blocks", () => {
    expect(extractText(utf8('[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]'), "application/json")).toBe(
      "id: 1\nname: a\n\nid: 2\nname: b",
    );
  });

  it("survives deep nesting", () => {
    const deep = `${"[".repeat(5000)}"bottom"${"]".repeat(5000)}`;
    expect(extractText(utf8(deep), "application/json")).toBe("bottom");
  });

  it("fails malformed JSON as the document's fault", () => {
    expect(() => extractText(utf8('{"a": 1,,}'), "application/json")).toThrow(ExtractionError);
    expect(() => extractText(utf8('{"a": 1,,}'), "application/json")).toThrow(/^malformed JSON: /);
  });

  it("renders NDJSON one record per block", () => {
    const ndjson = '{"id": 1, "text": "first"}\n\n{"id": 2, "tags": ["x", "y"]}\r\n"bare string"\n';
    expect(extractText(utf8(ndjson), "application/x-ndjson")).toBe("id: 1\ntext: first\n\nid: 2\ntags: x, y\n\nbare string");
  });

  it("names the line of a malformed NDJSON record", () => {
    expect(() => extractText(utf8('{"a": 1}\n{"a": \n'), "application/x-ndjson")).toThrow(/^malformed NDJSON at line 2: /);
  });
});

describe("extractText: CSV and TSV", () => {
  it.each([
    [
      "renders each row with its headers",
      'number,short_description,priority\r\nINC001,"Printer jams, again",2\r\nINC002,Email down,1\r\n',
      "number: INC001, short_description: Printer jams, again, priority: 2\nnumber: INC002, short_description: Email down, priority: 1",
    ],
    ["detects a tab delimiter", "a\tb\n1\t2,5\n", "a: 1, b: 2,5"],
    ["detects a semicolon delimiter", "name;price\ncafé;3,50\n", "name: café, price: 3,50"],
    [
      "skips empty cells and blank lines, names unnamed columns, flattens multi-line cells",
      'id,,note\n1,x,"line one\nline two"\n\n2,,\n3,y,z,extra\n',
      "id: 1, column 2: x, note: line one line two\nid: 2\nid: 3, column 2: y, note: z, column 4: extra",
    ],
    ["renders a lone row as its cells", "alpha,beta\n", "alpha, beta"],
  ])("%s", (_case, csv, rendered) => {
    expect(extractText(utf8(csv), "text/csv")).toBe(rendered);
  });

  it("fails malformed CSV as the document's fault", () => {
    expect(() => extractText(utf8('a,b\n"unclosed,2\n'), "text/csv")).toThrow(ExtractionError);
  });
});
