/**
 * Logging to an MCP client: the level a session set (`logging/setLevel`,
 * kept per session), and, for each call, every Effect log line the call
 * writes — the action's own and the pipeline's — sent to the client as a
 * `notifications/message` on the call's stream when it is at or above that
 * level (Effect's Fatal is `critical`, Error `error`, Warn `warning`, Info
 * `info`, Debug and Trace `debug`). The other loggers keep working.
 */
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { LoggingLevel, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/** A session's level: `undefined` until the client sets one (then nothing is sent). */
export interface Level {
  current: LoggingLevel | undefined
}

const severity: Record<LoggingLevel, number> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7
}

const levelOf = (level: LogLevel.LogLevel): LoggingLevel | undefined => {
  switch (level) {
    case "Fatal":
      return "critical"
    case "Error":
      return "error"
    case "Warn":
      return "warning"
    case "Info":
      return "info"
    case "Debug":
    case "Trace":
      return "debug"
    default:
      return undefined
  }
}

const textOf = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((part) => (typeof part === "string" ? part : (JSON.stringify(part) ?? String(part))))
    .join(" ")

/**
 * Runs `effect` with its log lines also sent to the client of `extra` (in
 * order, each redacted by `redact` in the context `effect` runs in, so with
 * the secrets of the configuration it was served with), when the session's
 * `level` lets them.
 */
export const forward =
  (
    level: Level,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
    redact: (text: string) => Effect.Effect<string>
  ) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    let queue: Promise<void> = Promise.resolve()
    const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
      const mcpLevel = levelOf(logLevel)
      const floor = level.current
      if (mcpLevel === undefined || floor === undefined || severity[mcpLevel] < severity[floor]) return
      queue = queue.then(() =>
        Effect.runPromiseWith(context)(redact(textOf(message))).then((data) =>
          extra
            .sendNotification({
              method: "notifications/message",
              params: { level: mcpLevel, logger: "rolecraft", data }
            })
            .catch(() => undefined)
        )
      )
    })
    // The redaction runs in the call's context (its ConfigProvider, its model, its MCP client), not the default one.
    let context: Context.Context<never> = Context.empty()
    return Effect.flatMap(
      Effect.zip(Effect.service(Logger.CurrentLoggers), Effect.context<never>()),
      ([loggers, own]) => {
        context = own
        return Effect.provideService(
          Effect.ensuring(
            effect,
            Effect.promise(() => queue)
          ),
          Logger.CurrentLoggers,
          new Set([...loggers, logger])
        )
      }
    )
  }
