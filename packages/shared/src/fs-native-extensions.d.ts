// The part of fs-native-extensions (no types of its own) that data-dir.ts uses.
declare module "fs-native-extensions" {
  /** A non-blocking lock of the whole file: true if taken, false if another holder has it. */
  export function tryLock(fd: number, options?: { shared?: boolean }): boolean;
  export function unlock(fd: number): void;
}
