// @ts-check
/** Building the page from data without parsing markup: text stays text, whatever it holds. */
import { ApiError } from "./api.js";

/** @typedef {Node | string | number | null | undefined | false} Child */

/**
 * An element with attributes (`on…` functions become listeners; `class`, boolean and string
 * attributes as written) and children (strings become text nodes; null and false are skipped).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === "value" || name === "checked" || name === "selected") /** @type {any} */ (el)[name] = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {(Child | Child[])[]} children
 */
export function append(el, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "number" ? String(child) : child);
  }
}

/**
 * A control with its label before it, the label naming the control by its id.
 * @param {string} text
 * @param {HTMLElement} control
 * @returns {Child[]}
 */
export const labelled = (text, control) => [h("label", { for: control.id }, text), control];

/** @param {number} n */
export function bytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** An instant as the service sends it (ISO 8601), shortened to the second. @param {string} iso */
export const instant = (iso) => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

/** @param {string} status */
export const statusBadge = (status) => h("span", { class: `badge status-${status}` }, status);

/**
 * A citation as one line: page, sheet, slide and heading path, when the chunk has them.
 * @param {{ page?: number, sheet?: string, slide?: number, heading_path?: string[] }} c
 */
export function citation(c) {
  const parts = [];
  if (c.page !== undefined) parts.push(`page ${c.page}`);
  if (c.sheet !== undefined) parts.push(`sheet ${c.sheet}`);
  if (c.slide !== undefined) parts.push(`slide ${c.slide}`);
  if (c.heading_path && c.heading_path.length > 0) parts.push(c.heading_path.join(" › "));
  return parts.join(" · ");
}

/** A metadata value as JSON, strings bare. @param {unknown} v */
export const shown = (v) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * What went wrong, readably: the problem's status, title and detail, the request id to find it
 * in the server log, and for a filter error the filter with its position marked.
 * @param {unknown} err
 * @param {{ filter?: string }} [context]
 */
export function problemView(err, context = {}) {
  if (err instanceof ApiError) {
    const p = err.problem;
    const at = p.position;
    const filter = context.filter;
    return h(
      "div",
      { class: "problem", role: "alert" },
      h("div", { class: "problem-title" }, `${err.status} ${p.title ?? ""}`),
      h("div", { class: "problem-detail" }, p.detail ?? ""),
      typeof at === "number" && filter !== undefined
        ? h("pre", { class: "problem-at" }, filter.slice(0, at), h("mark", null, filter.slice(at, at + 1) || " "), filter.slice(at + 1))
        : null,
      p.request_id ? h("div", { class: "problem-id" }, `request id ${p.request_id}`) : null,
    );
  }
  const message =
    err instanceof TypeError ? `Could not reach the service (${err.message}).` : String(err instanceof Error ? err.message : err);
  return h(
    "div",
    { class: "problem", role: "alert" },
    h("div", { class: "problem-title" }, "Error"),
    h("div", { class: "problem-detail" }, message),
  );
}

/**
 * For a view that shows its own errors: a refused token (401) goes on to the shell, which asks
 * for another; anything else is shown here.
 * @param {unknown} err
 * @param {{ filter?: string }} [context]
 */
export function problemOrRethrow(err, context) {
  if (err instanceof ApiError && err.status === 401) throw err;
  return problemView(err, context);
}

/** @param {string[] | undefined} warnings */
export const warningsView = (warnings) =>
  warnings && warnings.length > 0
    ? h(
        "ul",
        { class: "warnings", role: "status" },
        warnings.map((w) => h("li", null, w)),
      )
    : null;
