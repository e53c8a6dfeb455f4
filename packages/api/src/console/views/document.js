// @ts-check
import { call } from "../api.js";
import { bytes, citation, h, instant, shown, statusBadge } from "../dom.js";
import { collectionHref } from "./collections.js";

/**
 * @typedef {{ chunk_index: number, text: string, start: number, end: number,
 *   page?: number, sheet?: string, slide?: number, heading_path?: string[] }} Chunk
 */

/**
 * One document: its status and metadata, then its chunks as indexed with their citations.
 * `?chunk=N` (a search result's link) brings chunk N into view.
 * @param {HTMLElement} main
 * @param {string} collection
 * @param {string} docId
 * @param {URLSearchParams} params
 */
export async function documentView(main, collection, docId, params) {
  main.append(
    h(
      "p",
      { class: "crumbs" },
      h("a", { href: "#/" }, "Collections"),
      " / ",
      h("a", { href: collectionHref(collection) }, collection),
      " / ",
      docId,
    ),
  );
  const query = { collection_name: collection, id_value: docId };
  const [doc, indexed] = await Promise.all([call("GET", "get_document_status", { query }), call("GET", "get_document_chunks", { query })]);
  main.append(
    h("h1", null, doc.filename ?? docId),
    h(
      "dl",
      { class: "facts", id: "document-facts" },
      fact("Document", docId),
      fact("Status", statusBadge(doc.status)),
      fact("Version", doc.version),
      fact("Type", doc.content_type),
      fact("Size", bytes(doc.size)),
      fact("Chunks", doc.chunks),
      fact("SHA-256", h("code", null, doc.sha256)),
      fact("Created", instant(doc.created_at)),
      fact("Updated", instant(doc.updated_at)),
      doc.error ? fact("Failure reason", h("span", { class: "reason" }, doc.error)) : null,
    ),
    h("h2", null, "Metadata"),
    Object.keys(doc.metadata).length === 0
      ? h("p", { class: "empty" }, "No metadata.")
      : h(
          "table",
          { class: "grid", id: "metadata" },
          h(
            "tbody",
            null,
            Object.entries(doc.metadata)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, v]) => h("tr", null, h("th", null, k), h("td", null, shown(v)))),
          ),
        ),
  );

  /** @type {Chunk[]} */
  const chunks = indexed.chunks;
  const version =
    indexed.version === null
      ? "none indexed yet"
      : `version ${indexed.version}${indexed.version !== doc.version ? `, while version ${doc.version} is ${doc.status}` : ""}`;
  main.append(h("h2", null, `Chunks (${chunks.length})`), h("p", { class: "summary" }, version));
  const list = h("ol", { class: "chunks", id: "chunks" }, chunks.map(chunkView));
  main.append(list);
  const focus = params.get("chunk");
  const target = focus === null ? null : document.getElementById(`chunk-${focus}`);
  if (target) {
    target.classList.add("focus");
    target.scrollIntoView({ block: "center" });
  }
}

/** @param {string} term @param {import("../dom.js").Child | import("../dom.js").Child[]} value */
const fact = (term, value) => [h("dt", null, term), h("dd", null, value)];

/** @param {Chunk} c */
function chunkView(c) {
  const cite = citation(c);
  return h(
    "li",
    { class: "chunk", id: `chunk-${c.chunk_index}`, "data-chunk": c.chunk_index },
    h(
      "div",
      { class: "chunk-head" },
      h("span", { class: "chunk-index" }, `#${c.chunk_index}`),
      cite ? h("span", { class: "citation" }, cite) : null,
      h("span", { class: "offsets" }, `characters ${c.start}–${c.end}`),
    ),
    h("p", { class: "chunk-text" }, c.text),
  );
}
