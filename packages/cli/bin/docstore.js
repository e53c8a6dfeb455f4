#!/usr/bin/env node
// Node.js 24 runs the TypeScript sources as they are; an older Node.js cannot, so say so first.
import path from "node:path";

const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  const runSh = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../../../scripts/run.sh");
  process.stderr.write(
    `error: docstore needs Node.js 24 or later; this is Node.js ${process.versions.node}.\n` +
      `Run it as \`bash ${runSh} docstore …\`, which installs Node.js 24 under .tools/ when the machine's is older.\n`,
  );
  process.exit(1);
}
await import("../src/main.ts");
