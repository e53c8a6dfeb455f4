// @ts-check
/**
 * The console's shell: asks for the token once (kept in sessionStorage for this tab), then
 * shows the view the location's hash names, and asks again when the service refuses the token.
 */
import { ApiError, call, token } from "./api.js";
import { problemView } from "./dom.js";
import { collectionsView } from "./views/collections.js";
import { documentsView } from "./views/documents.js";
import { documentView } from "./views/document.js";
import { searchView } from "./views/search.js";
import { uploadView } from "./views/upload.js";

/** @typedef {{ params: URLSearchParams, parts: string[] }} Route */

const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const nav = /** @type {HTMLElement} */ (document.getElementById("nav"));
const signOut = /** @type {HTMLButtonElement} */ (document.getElementById("sign-out"));
const prompt = /** @type {HTMLElement} */ (document.getElementById("token-prompt"));
const form = /** @type {HTMLFormElement} */ (document.getElementById("token-form"));
const input = /** @type {HTMLInputElement} */ (document.getElementById("token-input"));
const tokenError = /** @type {HTMLElement} */ (document.getElementById("token-error"));

/** @returns {Route} */
function currentRoute() {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const [path = "", search = ""] = hash.split("?", 2);
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(search) };
}

/** The view for a route, and the name of its tab. @param {Route} route */
function viewOf({ parts, params }) {
  const [first, name, sub, docId] = parts;
  if (first === "search") return { tab: "search", show: () => searchView(main, params) };
  if (first === "upload") return { tab: "upload", show: () => uploadView(main, params) };
  if (first === "collections" && name && sub === "documents" && docId)
    return { tab: "collections", show: () => documentView(main, name, docId, params) };
  if (first === "collections" && name) return { tab: "collections", show: () => documentsView(main, name, params) };
  return { tab: "collections", show: () => collectionsView(main) };
}

let shown = 0;

async function render() {
  if (!token.get()) return askForToken();
  prompt.hidden = true;
  nav.hidden = false;
  signOut.hidden = false;
  const view = viewOf(currentRoute());
  for (const a of nav.querySelectorAll("a")) a.classList.toggle("active", a.dataset.view === view.tab);
  const mine = ++shown;
  main.replaceChildren();
  delete main.dataset.shown;
  main.setAttribute("aria-busy", "true");
  try {
    await view.show();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return askForToken(err);
    if (mine === shown) main.append(problemView(err));
  } finally {
    if (mine === shown && token.get()) {
      main.removeAttribute("aria-busy");
      // Which location the page now shows, whole: what a script (or a test) can wait for.
      main.dataset.shown = window.location.hash;
    }
  }
}

/** @param {ApiError} [refused] why the token in use was refused, if it was */
function askForToken(refused) {
  token.clear();
  main.replaceChildren();
  main.removeAttribute("aria-busy");
  nav.hidden = true;
  signOut.hidden = true;
  prompt.hidden = false;
  tokenError.replaceChildren(refused ? problemView(refused) : "");
  input.value = "";
  input.focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const candidate = input.value.trim();
  if (!candidate) return;
  const button = /** @type {HTMLButtonElement} */ (form.querySelector("button"));
  button.disabled = true;
  tokenError.replaceChildren();
  try {
    // The cheapest operation that needs a token tells whether this one is known.
    await call("GET", "get_list_of_collection", { token: candidate });
    token.set(candidate);
  } catch (err) {
    // A token without the read scope is still a token: the views say what it may not do.
    if (err instanceof ApiError && err.status === 403) token.set(candidate);
    else tokenError.replaceChildren(problemView(err));
  } finally {
    button.disabled = false;
  }
  if (token.get()) void render();
});

signOut.addEventListener("click", () => askForToken());
window.addEventListener("hashchange", () => void render());
void render();
