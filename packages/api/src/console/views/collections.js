// @ts-check
import { call } from "../api.js";
import { h } from "../dom.js";

/** @typedef {{ name: string, documents: number, ready: number, pending: number, failed: number }} Collection */

/** @param {string} name */
export const collectionHref = (name) => `#/collections/${encodeURIComponent(name)}`;

/** Every collection with its documents counted by ingestion status. @param {HTMLElement} main */
export async function collectionsView(main) {
  main.append(h("h1", null, "Collections"));
  /** @type {{ collections: Collection[] }} */
  const { collections } = await call("GET", "get_list_of_collection");
  if (collections.length === 0) {
    main.append(h("p", { class: "empty" }, "No collections yet. ", h("a", { href: "#/upload" }, "Upload a document"), " to make one."));
    return;
  }
  /** @param {string} name @param {string} status @param {number} n */
  const count = (name, status, n) => (n > 0 ? h("a", { href: `${collectionHref(name)}?status=${status}` }, n) : String(n));
  main.append(
    h(
      "table",
      { class: "grid", id: "collections" },
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Collection", "Documents", "Ready", "Pending", "Failed"].map((t) => h("th", null, t)),
        ),
      ),
      h(
        "tbody",
        null,
        collections.map((c) =>
          h(
            "tr",
            { "data-collection": c.name },
            h("td", null, h("a", { href: collectionHref(c.name) }, c.name)),
            h("td", { class: "num", "data-count": "documents" }, c.documents),
            h("td", { class: "num", "data-count": "ready" }, count(c.name, "ready", c.ready)),
            h("td", { class: "num", "data-count": "pending" }, count(c.name, "pending", c.pending)),
            h("td", { class: "num", "data-count": "failed" }, count(c.name, "failed", c.failed)),
          ),
        ),
      ),
    ),
  );
}
