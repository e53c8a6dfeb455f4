import type { Request } from "express";

/** The values of the `audit` field: stable, so that log pipelines can select on them. */
export type AuditEvent = "token.refused" | "access.denied" | "document.deleted" | "collection.deleted" | "doctor.repaired";

/**
 * Writes one audit line: `audit` names the event, `req_id` the request, `principal` who made it
 * (a token's fingerprint or a JWT's subject, never a token), with `ip`, `method` and `path`.
 * Audit lines are written at `info` even when LOG_LEVEL is `warn` or `error`: only `silent`
 * turns them off.
 */
export function audit(req: Request, event: AuditEvent, fields: Record<string, unknown> = {}): void {
  const log = req.log;
  const level = log.level === "silent" || log.levelVal <= log.levels.values.info! ? log.level : "info";
  log
    .child({}, { level })
    .info(
      { audit: event, principal: req.principal?.id ?? null, ip: req.ip, method: req.method, path: req.path, ...fields },
      `audit: ${event}`,
    );
}
