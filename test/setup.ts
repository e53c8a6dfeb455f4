// Runs in every test file (vitest.config.ts setupFiles): undoes what the file's services made.
import { afterAll } from "vitest";
import { runFileEnd } from "./cleanup.ts";

afterAll(runFileEnd, 60_000);
