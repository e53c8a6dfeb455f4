import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A temporary folder and a Redis key tag for the run, checked for leftovers at its end;
    // in each file, the services and folders the harness made are removed when it ends.
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup.ts"],
    // CI also writes a JSON report, from which .ci/run prints its one line of counts.
    reporters: process.env.CI ? ["default", "json"] : ["default"],
    outputFile: { json: ".vitest-results.json" },
  },
});
