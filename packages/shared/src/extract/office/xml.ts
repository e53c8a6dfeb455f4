/**
 * A small streaming XML scanner for the Office extractors, and the OPC relationship helpers
 * DOCX, PPTX and XLSX share. Office parts are machine-written and can run to tens of MB, so a
 * callback scan beats building a tree; and since DOCTYPEs are skipped and only the five
 * predefined entities and character references are decoded, no entity can expand.
 *
 * Element names are reported without their namespace prefix (`w:p` → `p`): writers may bind
 * other prefixes, and the local names used here do not clash within one part.
 */
import { ExtractionError } from "../../errors.ts";
import type { ExtractionLimits } from "../types.ts";
import { readZip } from "./zip.ts";

export interface XmlHandler {
  open?(name: string, attrs: string, selfClosing: boolean): void;
  close?(name: string): void;
  /** Character data (entities decoded), only while `wantText()` says so. */
  text?(text: string): void;
  wantText?(): boolean;
}

// Groups: "/" of an end tag; the local name (a prefix is matched and dropped); the attributes,
// in which a quoted value may hold ">".
const TAG = /<(\/?)(?:[^\s/>:]+:)?([^\s/>]+)((?:[^>"']*(?:"[^"]*"|'[^']*'))*[^>"']*)>/y;

export function scanXml(xml: string, handler: XmlHandler): void {
  const { open, close, text, wantText } = handler;
  let at = 0;
  while (at < xml.length) {
    const lt = xml.indexOf("<", at);
    const textEnd = lt === -1 ? xml.length : lt;
    if (textEnd > at && text && (!wantText || wantText())) text(decodeEntities(xml.slice(at, textEnd)));
    if (lt === -1) return;
    const kind = xml.charCodeAt(lt + 1);
    if (kind === 0x3f /* ? */) {
      at = must(xml.indexOf("?>", lt), lt) + 2;
    } else if (kind === 0x21 /* ! */) {
      if (xml.startsWith("<![CDATA[", lt)) {
        const end = must(xml.indexOf("]]>", lt), lt);
        if (text && (!wantText || wantText())) text(xml.slice(lt + 9, end));
        at = end + 3;
      } else if (xml.startsWith("<!--", lt)) at = must(xml.indexOf("-->", lt), lt) + 3;
      else at = skipDeclaration(xml, lt);
    } else {
      TAG.lastIndex = lt;
      const m = TAG.exec(xml);
      if (!m) throw new ExtractionError(`corrupt or truncated file: malformed XML at offset ${lt}`);
      const name = m[2]!;
      if (m[1]) close?.(name);
      else {
        const selfClosing = m[3]!.endsWith("/");
        open?.(name, selfClosing ? m[3]!.slice(0, -1) : m[3]!, selfClosing);
        if (selfClosing) close?.(name);
      }
      at = TAG.lastIndex;
    }
  }
}

function must(index: number, from: number): number {
  if (index === -1) throw new ExtractionError(`corrupt or truncated file: unterminated XML markup at offset ${from}`);
  return index;
}

// A DOCTYPE may hold an internal subset in brackets; it is skipped, never interpreted.
function skipDeclaration(xml: string, from: number): number {
  let depth = 0;
  for (let i = from + 2; i < xml.length; i++) {
    const c = xml[i];
    if (c === "[") depth++;
    else if (c === "]") depth--;
    else if (c === ">" && depth <= 0) return i + 1;
  }
  return must(-1, from);
}

const ATTRIBUTES = new Map<string, RegExp>();

/** The value of attribute `name`, entities decoded; a name without a prefix matches any prefix. */
export function attr(attrs: string, name: string): string | undefined {
  let re = ATTRIBUTES.get(name);
  const prefix = name.includes(":") ? "" : "(?:[\\w.-]+:)?";
  if (!re) ATTRIBUTES.set(name, (re = new RegExp(`(?:^|\\s)${prefix}${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`)));
  const m = re.exec(attrs);
  if (!m) return undefined;
  return decodeEntities(m[1] ?? m[2] ?? "");
}

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

export function decodeEntities(s: string): string {
  if (!s.includes("&")) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] !== "#") return NAMED[ref] ?? whole;
    const code = ref[1] === "x" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** An XML part's text; OOXML allows UTF-16 parts, marked by a byte order mark. */
export function decodeXml(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes);
  return new TextDecoder("utf-8").decode(bytes);
}

export interface Relationship {
  type: string;
  /** The target part's name inside the package, resolved against the source part. */
  target: string;
  external: boolean;
}

/** The relationships of `part`, read from its `_rels/*.rels` sibling in `files`, by id. */
export function relationships(files: Map<string, Uint8Array>, part: string): Map<string, Relationship> {
  const dir = part.slice(0, part.lastIndexOf("/") + 1);
  const rels = new Map<string, Relationship>();
  const bytes = files.get(relsPartOf(part));
  if (!bytes) return rels;
  scanXml(decodeXml(bytes), {
    open(name, attrs) {
      if (name !== "Relationship") return;
      const id = attr(attrs, "Id");
      const target = attr(attrs, "Target");
      if (!id || target === undefined) return;
      const external = attr(attrs, "TargetMode") === "External";
      rels.set(id, { type: attr(attrs, "Type") ?? "", target: external ? target : resolvePart(dir, target), external });
    },
  });
  return rels;
}

/** Resolves a relationship target ("../media/a.png", "/xl/sheet1.xml") against a folder. */
export function resolvePart(dir: string, target: string): string {
  const parts = target.startsWith("/") ? [] : dir.split("/").filter(Boolean);
  for (const segment of target.split("/")) {
    if (segment === "..") parts.pop();
    else if (segment && segment !== ".") parts.push(segment);
  }
  return parts.join("/");
}

/** Where the relationships of `part` are stored: `word/document.xml` → `word/_rels/document.xml.rels`. */
export function relsPartOf(part: string): string {
  const slash = part.lastIndexOf("/");
  return `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

/** The package's main part (document, workbook, presentation) named by `_rels/.rels`. */
export function mainPart(files: Map<string, Uint8Array>, fallback: string): string {
  for (const rel of relationships(files, "").values()) {
    if (rel.type.endsWith("/officeDocument") && !rel.external) return rel.target;
  }
  return fallback;
}

/**
 * The main part of the package in `bytes` (see mainPart), as text, with its relationships;
 * an ExtractionError naming the part and `kind` (DOCX, PPTX, XLSX) when the part is missing.
 */
export function readMainPart(
  bytes: Uint8Array,
  limits: ExtractionLimits,
  fallback: string,
  kind: string,
): { xml: string; rels: Map<string, Relationship> } {
  const main = mainPart(
    readZip(bytes, limits, (name) => name === "_rels/.rels"),
    fallback,
  );
  const head = readZip(bytes, limits, (name) => name === main || name === relsPartOf(main));
  const part = head.get(main);
  if (!part) throw new ExtractionError(`corrupt or truncated file: no ${main} in the ${kind}`);
  return { xml: decodeXml(part), rels: relationships(head, main) };
}

/** The first internal target of a relationship whose type ends with `/${type}`. */
export function targetOfType(rels: Map<string, Relationship>, type: string): string | undefined {
  for (const rel of rels.values()) if (!rel.external && rel.type.endsWith(`/${type}`)) return rel.target;
  return undefined;
}
