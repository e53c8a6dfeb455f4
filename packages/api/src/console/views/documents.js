// @ts-check
import { call } from "../api.js";
import { bytes, h, instant, labelled, problemOrRethrow, problemView, statusBadge, warningsView } from "../dom.js";
import { collectionHref } from "./collections.js";

const PAGE = 50;
const STATUSES = ["", "ready", "pending", "queued", "processing", "failed"];

/**
 * @typedef {{ doc_id: string, name: string, status: string, version: number, chunks: number, size: number,
 *   content_type: string, error: string | null, updated_at: string }} Listed
 */

/** @param {string} collection @param {string} docId */
export const documentHref = (collection, docId) => `${collectionHref(collection)}/documents/${encodeURIComponent(docId)}`;

/**
 * A collection's documents, selected by status and by a filter on their metadata, a page at a time.
 * @param {HTMLElement} main
 * @param {string} collection
 * @param {URLSearchParams} params
 */
export async function documentsView(main, collection, params) {
  const filter = params.get("tag_info") ?? "";
  const status = params.get("status") ?? "";
  const filterInput = h("input", {
    name: "tag_info",
    id: "filter",
    value: filter,
    placeholder: "e.g. type=incident^priority<=2",
    spellcheck: "false",
  });
  const statusSelect = h(
    "select",
    { name: "status", id: "status" },
    STATUSES.map((s) => h("option", { value: s, selected: s === status }, s || "any")),
  );
  const form = h(
    "form",
    { class: "bar", id: "documents-filter" },
    labelled("Filter", filterInput),
    labelled("Status", statusSelect),
    h("button", { type: "submit" }, "Apply"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (filterInput.value.trim()) next.set("tag_info", filterInput.value.trim());
    if (statusSelect.value) next.set("status", statusSelect.value);
    const query = next.toString();
    window.location.hash = `${collectionHref(collection)}${query ? `?${query}` : ""}`;
  });
  main.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Collections"), " / ", collection),
    h("h1", null, collection),
    h(
      "p",
      { class: "actions" },
      h("a", { href: `#/search?collections=${encodeURIComponent(collection)}` }, "Search this collection"),
      " · ",
      h("a", { href: `#/upload?collection=${encodeURIComponent(collection)}` }, "Upload here"),
    ),
    form,
  );
  const tbody = h("tbody");
  const table = h(
    "table",
    { class: "grid", id: "documents" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        ["Document", "Name", "Status", "Version", "Size", "Type", "Chunks", "Failure reason", "Updated"].map((t) => h("th", null, t)),
      ),
    ),
    tbody,
  );
  const summary = h("p", { class: "summary", id: "documents-summary" });
  const more = h("button", { type: "button", id: "more", hidden: true }, "Load more");
  const errors = h("div");
  main.append(summary, table, more, errors);

  let shown = 0;
  /** @param {string | null} cursor */
  const load = async (cursor) => {
    const page = await call("GET", "get_list_of_documents_names", {
      query: { collection_name: collection, limit: PAGE, cursor, tag_info: filter, status },
    });
    if (cursor === null) {
      const warnings = warningsView(page.warnings);
      if (warnings) form.after(warnings);
    }
    for (const d of /** @type {Listed[]} */ (page.documents)) tbody.append(row(collection, d));
    shown += page.documents.length;
    summary.textContent = `${shown} document${shown === 1 ? "" : "s"}${page.next_cursor ? " so far" : ""}${filter || status ? " matching" : ""}`;
    more.hidden = !page.next_cursor;
    more.onclick = () => {
      more.disabled = true;
      load(page.next_cursor)
        .catch((err) => errors.replaceChildren(problemView(err)))
        .finally(() => (more.disabled = false));
    };
  };
  try {
    await load(null);
  } catch (err) {
    const shown = problemOrRethrow(err, { filter });
    table.remove();
    summary.remove();
    main.append(shown);
  }
}

/** @param {string} collection @param {Listed} d */
function row(collection, d) {
  return h(
    "tr",
    { "data-doc": d.doc_id },
    h("td", null, h("a", { href: documentHref(collection, d.doc_id) }, d.doc_id)),
    h("td", null, d.name),
    h("td", null, statusBadge(d.status)),
    h("td", { class: "num" }, d.version),
    h("td", { class: "num" }, bytes(d.size)),
    h("td", null, d.content_type),
    h("td", { class: "num" }, d.chunks),
    h("td", { class: "reason" }, d.error ?? ""),
    h("td", null, instant(d.updated_at)),
  );
}
