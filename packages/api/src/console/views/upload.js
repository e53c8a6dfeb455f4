// @ts-check
import { call } from "../api.js";
import { h, labelled, problemOrRethrow, statusBadge } from "../dom.js";
import { collectionHref } from "./collections.js";
import { documentHref } from "./documents.js";

/**
 * A file and its metadata into a collection (made on first use). With "wait", the answer comes
 * once the document is searchable or has failed, with the reason.
 * @param {HTMLElement} main
 * @param {URLSearchParams} params
 */
export async function uploadView(main, params) {
  /** @type {{ collections: { name: string }[] }} */
  const { collections } = await call("GET", "get_list_of_collection");
  const collectionInput = h("input", {
    id: "upload-collection",
    name: "collection_name",
    list: "known-collections",
    required: true,
    value: params.get("collection") ?? "",
    spellcheck: "false",
  });
  const docIdInput = h("input", {
    id: "upload-doc-id",
    name: "doc_id",
    placeholder: "optional: else metadata.sys_id, else a new id",
    spellcheck: "false",
  });
  const fileInput = h("input", { id: "upload-file", name: "file", type: "file", required: true });
  const metadataInput = h("textarea", {
    id: "upload-metadata",
    name: "metadata",
    rows: "5",
    placeholder: '{"type": "runbook", "priority": 2}',
    spellcheck: "false",
  });
  const waitInput = h("input", { id: "upload-wait", name: "wait", type: "checkbox", checked: true });
  const button = h("button", { type: "submit" }, "Upload");
  const outcome = h("div", { id: "upload-result", "aria-live": "polite" });
  const form = h(
    "form",
    { class: "stack", id: "upload-form" },
    labelled("Collection", collectionInput),
    h(
      "datalist",
      { id: "known-collections" },
      collections.map((c) => h("option", { value: c.name })),
    ),
    labelled("File", fileInput),
    labelled("Metadata (a JSON object)", metadataInput),
    labelled("Document id", docIdInput),
    h("label", { class: "inline" }, waitInput, " Wait until it is indexed"),
    button,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const file = fileInput.files?.[0];
    if (!file) return;
    const body = new FormData();
    body.append("file", file, file.name);
    if (metadataInput.value.trim()) body.append("metadata", metadataInput.value);
    const collection = collectionInput.value.trim();
    button.disabled = true;
    outcome.replaceChildren(h("p", { class: "summary" }, `Uploading ${file.name}…`));
    try {
      const r = await call("POST", "load_document_to_collection", {
        query: { collection_name: collection, doc_id: docIdInput.value.trim(), wait: waitInput.checked ? "true" : undefined },
        form: body,
      });
      outcome.replaceChildren(
        h(
          "div",
          { class: "outcome", "data-status": r.status },
          h(
            "p",
            null,
            "Loaded ",
            h("a", { href: documentHref(r.collection_name, r.doc_id) }, r.doc_id),
            " into ",
            h("a", { href: collectionHref(r.collection_name) }, r.collection_name),
            ": ",
            statusBadge(r.status),
            ` version ${r.version}`,
            r.status === "ready" ? `, ${r.chunks} chunk${r.chunks === 1 ? "" : "s"}` : "",
          ),
          r.error ? h("p", { class: "reason" }, r.error) : null,
        ),
      );
    } catch (err) {
      try {
        outcome.replaceChildren(problemOrRethrow(err));
      } catch {
        window.dispatchEvent(new HashChangeEvent("hashchange")); // the shell asks for a token again
      }
    } finally {
      button.disabled = false;
    }
  });
  main.append(h("h1", null, "Upload"), form, outcome);
}
