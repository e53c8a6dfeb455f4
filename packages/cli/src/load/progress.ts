/**
 * The progress of a load: a bar on a terminal, a plain line every few seconds otherwise, or
 * JSON lines (`--json`); all on stderr, so that stdout carries only the summary.
 */
import { SingleBar } from "cli-progress";
import { formatBytes, formatSeconds } from "../format.ts";
import type { Tracker } from "./tracker.ts";

export type ProgressMode = "bar" | "plain" | "json";

export interface Snapshot {
  event: "progress";
  seconds: number;
  total: number;
  sent: number;
  bytes: number;
  accepted: number;
  indexed: number;
  failed: number;
  skipped: number;
  /** Accepted, not yet indexed or failed. */
  waiting: number;
  /** Documents this run sent, a second: settled ones while waiting for indexing, accepted ones with --no-wait. */
  rate: number;
  /** Seconds left at that rate; null until it can be told. */
  eta: number | null;
}

export function snapshot(t: Tracker, wait: boolean): Snapshot {
  const seconds = t.elapsed();
  const indexed = t.indexedEstimate();
  // This run's documents only: what earlier runs loaded is neither in the rate nor left to do.
  const done = (wait ? indexed : t.accepted) + t.failed - t.failedUnsent;
  const rate = seconds > 0 ? done / seconds : 0;
  const left = Math.max(0, t.total - t.skipped - t.failedUnsent - done);
  return {
    event: "progress",
    seconds: round(seconds),
    total: t.total,
    sent: t.sent,
    bytes: t.sentBytes,
    accepted: t.accepted,
    indexed,
    failed: t.failed,
    skipped: t.skipped,
    waiting: t.waiting(),
    rate: round(rate),
    eta: rate > 0 ? Math.round(left / rate) : left === 0 ? 0 : null,
  };
}

const round = (n: number) => Math.round(n * 10) / 10;

/** One plain line: what a log or CI output shows every few seconds. */
export function plainLine(s: Snapshot): string {
  return (
    `${formatSeconds(s.seconds)}: sent ${s.sent}/${s.total - s.skipped} (${formatBytes(s.bytes)}), accepted ${s.accepted}, indexed ${s.indexed}, ` +
    `failed ${s.failed}${s.skipped ? `, already loaded ${s.skipped}` : ""}; ${s.rate} docs/s, ETA ${formatSeconds(s.eta)}`
  );
}

export class Progress {
  readonly #tracker: Tracker;
  readonly #wait: boolean;
  readonly #mode: ProgressMode;
  readonly #out: NodeJS.WriteStream;
  #timer: NodeJS.Timeout | undefined;
  #bar: SingleBar | undefined;

  constructor(tracker: Tracker, wait: boolean, mode: ProgressMode, out: NodeJS.WriteStream = process.stderr) {
    this.#tracker = tracker;
    this.#wait = wait;
    this.#mode = mode;
    this.#out = out;
  }

  start(plainEveryMs = 5000) {
    if (this.#mode === "bar") {
      this.#bar = new SingleBar({
        stream: this.#out,
        format:
          "{bar} {percentage}% | {value}/{total} docs | sent {sent} ({bytes}) | accepted {accepted} | indexed {indexed} | failed {failed} | {rate} docs/s | ETA {left}",
        hideCursor: true,
        barsize: 24,
        fps: 5,
      });
      this.#bar.start(this.#tracker.total, 0, this.#payload());
      this.#timer = setInterval(() => this.#draw(), 200);
    } else {
      this.#timer = setInterval(() => this.#line(), plainEveryMs);
    }
    this.#timer.unref();
  }

  #payload() {
    const s = snapshot(this.#tracker, this.#wait);
    return {
      sent: s.sent,
      bytes: formatBytes(s.bytes),
      accepted: s.accepted,
      indexed: s.indexed,
      failed: s.failed,
      rate: s.rate,
      left: formatSeconds(s.eta),
    };
  }

  #draw() {
    const t = this.#tracker;
    this.#bar?.setTotal(t.total);
    this.#bar?.update(this.#wait ? t.skipped + t.indexedEstimate() + t.failed : t.skipped + t.accepted + t.failed, this.#payload());
  }

  #line() {
    const s = snapshot(this.#tracker, this.#wait);
    this.#out.write(this.#mode === "json" ? `${JSON.stringify(s)}\n` : `${plainLine(s)}\n`);
  }

  /** Says something outside the bar (a phase, a retry) without garbling it. */
  note(text: string) {
    if (this.#mode === "json") return;
    // Clears the bar's line; the bar draws itself again below on its next tick.
    if (this.#bar) this.#out.write(`\r\x1b[K${text}\n`);
    else this.#out.write(`${text}\n`);
  }

  stop() {
    clearInterval(this.#timer);
    if (this.#bar) {
      this.#draw();
      this.#bar.stop();
    } else this.#line();
  }
}
