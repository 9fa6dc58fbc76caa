/**
 * A recorder of the spans and log lines a program produces, for tests that
 * check what Rolecraft reports (span names and attributes, categories on
 * failure, warnings) and what it must never report (secrets).
 *
 * @example
 * ```ts
 * import { Telemetry } from "@rolecraft/testing"
 * import { Effect } from "effect"
 *
 * const recorder = Telemetry.make()
 *
 * const program = Effect.gen(function* () {
 *   yield* Effect.logWarning("disk almost full").pipe(Effect.withSpan("check"))
 *   return {
 *     spans: recorder.spans.map((span) => span.name), // ["check"]
 *     logs: recorder.logs.map((line) => `${line.level}: ${line.message}`) // ["Warn: disk almost full"]
 *   }
 * }).pipe(Effect.withTracer(recorder.tracer), Effect.provide(recorder.layer)) // the tracer, and the logger
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import type * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Tracer from "effect/Tracer"

/**
 * One recorded log line: its level, its message parts as text, and the
 * pretty-printed cause when the line carried one (`""` otherwise).
 *
 * @category models
 * @since 0.1.0
 */
export interface LogLine {
  readonly level: string
  readonly message: string
  readonly cause: string
}

/**
 * What {@link make} returns. `spans` and `logs` fill as the program runs.
 *
 * - `tracer`: give it to `Effect.withTracer(tracer)` to record spans.
 * - `logger`: a logger recording every line; `layer` provides it in place
 *   of the default loggers.
 *
 * @category models
 * @since 0.1.0
 */
export interface Recorder {
  readonly spans: ReadonlyArray<Tracer.NativeSpan>
  readonly logs: ReadonlyArray<LogLine>
  readonly tracer: Tracer.Tracer
  readonly logger: Logger.Logger<unknown, void>
  readonly layer: Layer.Layer<never>
}

const text = (message: unknown): string => (Array.isArray(message) ? message : [message]).map(String).join(" ")

/**
 * Makes an empty recorder.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Telemetry } from "@rolecraft/testing"
 *
 * const recorder = Telemetry.make()
 * const program = Effect.log("hello").pipe(Effect.withSpan("greet"))
 * await Effect.runPromise(program.pipe(Effect.withTracer(recorder.tracer), Effect.provide(recorder.layer)))
 * // recorder.spans[0].name === "greet"; recorder.logs[0].message === "hello"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (): Recorder => {
  const spans: Array<Tracer.NativeSpan> = []
  const logs: Array<LogLine> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  const logger = Logger.make<unknown, void>(({ message, logLevel, cause }) => {
    logs.push({
      level: logLevel,
      message: text(message),
      cause: cause.reasons.length === 0 ? "" : Cause.pretty(cause)
    })
  })
  return { spans, logs, tracer, logger, layer: Logger.layer([logger]) }
}
