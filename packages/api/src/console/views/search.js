// @ts-check
import { call } from "../api.js";
import { citation, h, labelled, problemOrRethrow, shown, warningsView } from "../dom.js";
import { highlighted, queryTerms } from "../highlight.js";
import { collectionHref } from "./collections.js";
import { documentHref } from "./documents.js";

/**
 * @typedef {{ doc_id: string, collection_name: string, chunk_index: number, text: string, score: number,
 *   metadata: Record<string, unknown>, start: number, end: number, page?: number, sheet?: string, slide?: number,
 *   heading_path?: string[] }} Hit
 */

/**
 * The search box (query, k, collections, filter) and, when the location carries a query, its
 * ranked chunks with scores and the query's words marked.
 * @param {HTMLElement} main
 * @param {URLSearchParams} params
 */
export async function searchView(main, params) {
  const query = params.get("query") ?? "";
  const k = params.get("k") ?? "4";
  const filter = params.get("filter") ?? "";
  const chosen = new Set((params.get("collections") ?? "").split(",").filter(Boolean));
  /** @type {{ collections: { name: string }[] }} */
  const { collections } = await call("GET", "get_list_of_collection");
  for (const name of chosen) if (!collections.some((c) => c.name === name)) collections.push({ name });

  const queryInput = h("input", {
    id: "query",
    name: "query",
    type: "search",
    value: query,
    required: true,
    placeholder: "What are you looking for?",
  });
  const kInput = h("input", { id: "k", name: "k", type: "number", min: "1", value: k, class: "short" });
  const filterInput = h("input", {
    id: "search-filter",
    name: "filter",
    value: filter,
    placeholder: "e.g. status=open^priority<=2",
    spellcheck: "false",
  });
  const select = h(
    "select",
    { id: "collections", name: "collections", multiple: true, size: String(Math.min(6, Math.max(2, collections.length))) },
    collections.map((c) => h("option", { value: c.name, selected: chosen.has(c.name) }, c.name)),
  );
  const form = h(
    "form",
    { class: "stack", id: "search-form" },
    labelled("Query", queryInput),
    labelled("Results (k)", kInput),
    labelled("Collections (none selected: all)", select),
    labelled("Filter", filterInput),
    h("button", { type: "submit" }, "Search"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams({ query: queryInput.value, k: kInput.value });
    const names = [...select.selectedOptions].map((o) => o.value);
    if (names.length > 0) next.set("collections", names.join(","));
    if (filterInput.value.trim()) next.set("filter", filterInput.value.trim());
    const target = `#/search?${next}`;
    // The same search again (a new document may match now) is run without a hash change.
    if (window.location.hash === target) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else window.location.hash = target;
  });
  main.append(h("h1", null, "Search"), form);
  if (!query.trim()) return;

  const results = h("section", { id: "results", "aria-live": "polite" });
  main.append(results);
  try {
    const answer = await call("POST", "get_relevant_documents", {
      query: { query, k },
      json: { ...(chosen.size > 0 ? { collection_names: [...chosen] } : {}), ...(filter ? { metadata: filter } : {}) },
    });
    /** @type {Hit[]} */
    const hits = answer.results;
    const terms = queryTerms(query);
    results.append(
      warningsView(answer.warnings) ?? "",
      h(
        "p",
        { class: "summary" },
        hits.length === 0 ? "No chunk matches." : `${hits.length} chunk${hits.length === 1 ? "" : "s"}, best first`,
      ),
      h(
        "ol",
        { class: "hits" },
        hits.map((hit, i) => hitView(hit, i + 1, terms)),
      ),
    );
  } catch (err) {
    results.append(problemOrRethrow(err, { filter }));
  }
}

/** @param {Hit} hit @param {number} rank @param {string[]} terms */
function hitView(hit, rank, terms) {
  const cite = citation(hit);
  const meta = Object.entries(hit.metadata);
  return h(
    "li",
    { class: "hit", "data-rank": rank },
    h(
      "div",
      { class: "chunk-head" },
      h("span", { class: "rank" }, `${rank}.`),
      h("span", { class: "score", title: "score" }, hit.score.toFixed(4)),
      h("a", { href: `${documentHref(hit.collection_name, hit.doc_id)}?chunk=${hit.chunk_index}` }, hit.doc_id),
      h("span", null, "in ", h("a", { href: collectionHref(hit.collection_name) }, hit.collection_name)),
      h("span", { class: "chunk-index" }, `chunk #${hit.chunk_index}`),
      cite ? h("span", { class: "citation" }, cite) : null,
    ),
    h("p", { class: "chunk-text" }, highlighted(hit.text, terms)),
    meta.length > 0
      ? h(
          "p",
          { class: "meta" },
          meta.map(([key, v]) => h("span", null, `${key}=${shown(v)}`)),
        )
      : null,
  );
}
