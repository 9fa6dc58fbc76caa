/**
 * The credential never leaves in a log line or an error this package writes:
 * every text that may hold it (a server's stderr, an error message, a
 * received payload) passes through `hide`.
 */
import * as Redacted from "effect/Redacted"
import type * as Core from "@rolecraft/core/McpClient"

/** Replaces each secret in a text with `[REDACTED]`. */
export const hide = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets.reduce((out, secret) => (secret === "" ? out : out.split(secret).join("[REDACTED]")), text)

/** The secrets of a connection: its credential's value, if any. */
export const secretsOf = (options: Core.ConnectOptions): ReadonlyArray<string> =>
  options.credential === undefined ? [] : [Redacted.value(options.credential.value)]
