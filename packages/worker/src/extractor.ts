import { DISPATCH_MODULE, createExtractionSandbox, type Config, type ExtractionSandbox } from "@docstore/shared";

/** The extraction sandbox a worker (process or thread) uses: isolated, timed, memory-capped. */
export function createExtractor(config: Config): ExtractionSandbox {
  return createExtractionSandbox({
    module: DISPATCH_MODULE,
    timeoutMs: config.extraction.timeoutMs,
    maxOldGenerationSizeMb: config.extraction.memoryMb,
    limits: config.extraction.limits,
  });
}
