#!/usr/bin/env node
// Node.js 24 runs the TypeScript sources as they are.
import "../src/main.ts";
