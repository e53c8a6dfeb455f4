// @ts-check
/** The service's HTTP API as the console uses it: bearer token, JSON in and out, problem details as errors. */

const TOKEN_KEY = "docstore.token";

/** The console is served at <base>/console/, the operations at <base>/. */
const API_BASE = new URL("../", window.location.href);

export const token = {
  /** @returns {string | null} */
  get: () => sessionStorage.getItem(TOKEN_KEY),
  /** @param {string} value */
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/**
 * @typedef {{ type?: string, title?: string, status?: number, detail?: string, request_id?: string, position?: number }} Problem
 */

/** An answer that is not a success: its problem details (RFC 9457), or what could be read of it. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {Problem} problem
   */
  constructor(status, problem) {
    super(`${status} ${problem.title ?? ""}: ${problem.detail ?? ""}`);
    this.status = status;
    this.problem = problem;
  }
}

/**
 * @typedef {Record<string, string | number | boolean | string[] | undefined | null>} Query
 * @typedef {{ query?: Query, json?: unknown, form?: FormData, token?: string }} CallOptions
 */

/**
 * Calls one operation. Throws ApiError for a 4xx or 5xx, and the browser's TypeError when the
 * service cannot be reached.
 * @param {"GET" | "POST" | "DELETE"} method
 * @param {string} operation e.g. "get_list_of_collection"
 * @param {CallOptions} [options]
 * @returns {Promise<any>}
 */
export async function call(method, operation, options = {}) {
  const url = new URL(operation, API_BASE);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json, application/problem+json" };
  const bearer = options.token ?? token.get();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  /** @type {BodyInit | undefined} */
  let body;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.form) {
    body = options.form;
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  /** @type {any} */
  let parsed = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  if (!res.ok) {
    const problem = parsed && typeof parsed === "object" ? parsed : { title: res.statusText, detail: text.slice(0, 500) };
    throw new ApiError(res.status, { status: res.status, ...problem });
  }
  return parsed;
}
