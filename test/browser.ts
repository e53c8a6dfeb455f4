/**
 * Headless Chromium for the console's end-to-end tests: Debian's chromium (never a browser a
 * tool downloads), driven by playwright-core, with a fresh profile each launch and none of
 * the browser's own network traffic.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

export const CHROMIUM_SKIP = `skipped: ${CHROMIUM} is missing; install Debian's chromium package (apt-get install chromium), as .ci/run does`;

export const hasChromium = () => existsSync(CHROMIUM);

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** One browser with an empty profile of its own (playwright passes it as --user-data-dir). */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), "docstore-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
