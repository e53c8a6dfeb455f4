export { createApp } from "./app.ts";
export type { AppContext } from "./context.ts";
export { createAuthenticator, loadOrCreateToken } from "./auth.ts";
