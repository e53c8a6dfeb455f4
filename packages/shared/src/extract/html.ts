/**
 * The main text of an HTML page, via html-to-text. Navigation, page headers and footers,
 * scripts, styles and forms are dropped; headings become Markdown `#` lines so the chunker
 * starts new chunks at them; links keep their text only (URLs are noise for search);
 * tables become one `cell | cell` line per row instead of space-padded columns.
 */
import { compile, type DomNode, type FormatCallback } from "html-to-text";

const DROPPED = [
  "head",
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "canvas",
  "iframe",
  "object",
  "embed",
  "nav",
  "[role=navigation]",
  "[hidden]",
  "button",
  "select",
  "img",
  "hr",
];

const HEADING_LEVELS = [1, 2, 3, 4, 5, 6] as const;

function heading(level: number): FormatCallback {
  return (elem, walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 });
    builder.addLiteral(`${"#".repeat(level)} `);
    walk(elem.children, builder);
    builder.closeBlock({ trailingLineBreaks: 2 });
  };
}

// A page's <header>/<footer> is chrome; an article's own header holds its title and byline.
const articleChrome: FormatCallback = (elem, walk, builder) => {
  for (let node = elem.parent; node; node = node.parent) {
    if (node.name === "article") {
      builder.openBlock({ leadingLineBreaks: 1 });
      walk(elem.children, builder);
      builder.closeBlock({ trailingLineBreaks: 1 });
      return;
    }
  }
};

const tableRows: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 });
  for (const row of rowsOf(elem)) {
    builder.openBlock({ leadingLineBreaks: 1 });
    let first = true;
    for (const cell of row.children) {
      if (cell.type !== "tag" || (cell.name !== "td" && cell.name !== "th") || !hasText(cell)) continue;
      if (!first) builder.addInline(" | ");
      first = false;
      walk(cell.children, builder);
    }
    builder.closeBlock({ trailingLineBreaks: 1 });
  }
  builder.closeBlock({ trailingLineBreaks: 2 });
};

function rowsOf(elem: DomNode): DomNode[] {
  const rows: DomNode[] = [];
  for (const child of elem.children) {
    if (child.type !== "tag") continue;
    if (child.name === "tr") rows.push(child);
    else if (child.name === "thead" || child.name === "tbody" || child.name === "tfoot") rows.push(...rowsOf(child));
  }
  return rows;
}

function hasText(node: DomNode): boolean {
  if (node.type === "text") return /\S/.test(node.data ?? "");
  return (node.children ?? []).some(hasText);
}

// Compiling the selectors is the expensive part, so it happens once; the result is a pure function.
const convert = compile({
  wordwrap: false,
  // <main> when the page has one, else the whole document.
  baseElements: { selectors: ["main"], returnDomByDefault: true },
  limits: { maxInputLength: Number.MAX_SAFE_INTEGER }, // size limits belong to the API, not silent truncation
  formatters: {
    ...Object.fromEntries(HEADING_LEVELS.map((level) => [`h${level}`, heading(level)])),
    articleChrome,
    tableRows,
  },
  selectors: [
    ...DROPPED.map((selector) => ({ selector, format: "skip" })),
    { selector: "header", format: "articleChrome" },
    { selector: "footer", format: "articleChrome" },
    { selector: "a", options: { ignoreHref: true } },
    ...HEADING_LEVELS.map((level) => ({ selector: `h${level}`, format: `h${level}` })),
    { selector: "ul", options: { itemPrefix: "- " } },
    { selector: "table", format: "tableRows" },
  ],
});

export function htmlToText(html: string): string {
  return convert(html);
}
