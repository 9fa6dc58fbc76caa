/**
 * A scripted language model for tests: a queue of steps — text replies,
 * tool-call replies, streamed chunks, failures — answered one per model call
 * (`generate` or `stream`), every request recorded, and a check that the
 * script was used exactly. Built with
 * `LanguageModel.make`, the constructor the openai layer uses, so the whole
 * pipeline (span, error mapping, usage metering, interruption) runs under test.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { ScriptedModel } from "@rolecraft/testing"
 * import { Effect, Schema } from "effect"
 *
 * const Writer = Role.make({
 *   identity: { name: "writer", goal: "Write", domain: "text" },
 *   actions: { tip: Action.llm({ description: "A packing tip", parameters: { destination: Schema.String } }) }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "test", roles: [Writer] })
 *   const tip = yield* agent.executeAction("tip", { destination: "Oslo" }) // "Pack wool."
 *   const recording = yield* ScriptedModel.Recording
 *   yield* recording.assertDone // every step of the script was used
 *   return tip
 * }).pipe(Effect.scoped, Effect.provide(ScriptedModel.layer([ScriptedModel.reply("Pack wool.")])))
 * ```
 *
 * @since 0.1.0
 */
import { ActionError, LanguageModel, type ModelResponse } from "@rolecraft/core"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { render, type ScriptedToolCall } from "./internal/scriptedToolCall.ts"

/**
 * Token counts a step reports; missing counts are 0 (total: input + output).
 *
 * @category models
 * @since 0.1.0
 */
export interface StepUsage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
}

export type { ScriptedToolCall } from "./internal/scriptedToolCall.ts"

/**
 * One scripted answer (build with {@link reply}, {@link toolCalls},
 * {@link chunks}, {@link fail}, {@link respond}, {@link delayed}).
 *
 * Asked to stream, a reply is sent one word per chunk and tool calls in one
 * chunk, the finish reason, usage and model in a last chunk; asked to
 * generate, {@link chunks} are joined as a stream's would be.
 *
 * @category models
 * @since 0.1.0
 */
export type Step =
  | {
      readonly _tag: "Reply"
      readonly text: string
      readonly usage?: StepUsage | undefined
      readonly finishReason?: ModelResponse.FinishReason | undefined
      readonly model?: string | undefined
    }
  | {
      readonly _tag: "ToolCalls"
      readonly calls: ReadonlyArray<ScriptedToolCall>
      readonly text?: string | undefined
      readonly usage?: StepUsage | undefined
    }
  | { readonly _tag: "Fail"; readonly failure: unknown; readonly retryAfter?: Duration.Input | undefined }
  | { readonly _tag: "Respond"; readonly respond: (request: LanguageModel.Request) => Step }
  | { readonly _tag: "Delayed"; readonly delay: Duration.Input; readonly step: Step }
  | {
      readonly _tag: "Chunks"
      readonly chunks: ReadonlyArray<ModelResponse.ProviderChunk>
      readonly stall: boolean
    }

/**
 * A text reply (finish reason `"stop"` unless given).
 *
 * @category constructors
 * @since 0.1.0
 */
export const reply = (
  text: string,
  options?: {
    readonly usage?: StepUsage | undefined
    readonly finishReason?: ModelResponse.FinishReason | undefined
    readonly model?: string | undefined
  }
): Step => ({ _tag: "Reply", text, ...options })

/**
 * A reply calling tools (finish reason `"tool_calls"`), with optional text.
 *
 * @category constructors
 * @since 0.1.0
 */
export const toolCalls = (
  calls: ReadonlyArray<ScriptedToolCall>,
  options?: { readonly text?: string | undefined; readonly usage?: StepUsage | undefined }
): Step => ({ _tag: "ToolCalls", calls, ...options })

/**
 * A failing call. `failure` is an HTTP status (mapped like the openai layer
 * maps it, with `LanguageModel.httpFailure`: 408/429/5xx TRANSIENT with
 * `retryAfter`, other statuses — 409 included — EXECUTION), an `ActionError` (passed through as
 * is), or anything else (EXECUTION, as `LanguageModel.make` maps it).
 *
 * @category constructors
 * @since 0.1.0
 */
export const fail = (
  failure: number | ActionError.ActionError | unknown,
  options?: { readonly retryAfter?: Duration.Input | undefined }
): Step => ({ _tag: "Fail", failure, ...options })

/**
 * A streamed answer given chunk by chunk (see `ModelResponse.ProviderChunk`:
 * text pieces, tool-call fragments by index with ids and names on any of
 * them, finish reason, usage). Without a chunk carrying a finish reason the
 * stream counts as cut off (TRANSIENT). With `stall: true` the stream sends
 * nothing more after the chunks and never ends (until interrupted).
 *
 * @category constructors
 * @since 0.1.0
 */
export const chunks = (
  list: ReadonlyArray<ModelResponse.ProviderChunk>,
  options?: { readonly stall?: boolean | undefined }
): Step => ({ _tag: "Chunks", chunks: list, stall: options?.stall ?? false })

const wordsOf = (text: string): ReadonlyArray<string> => text.match(/\S+\s*|\s+/g) ?? []

/** A whole answer as chunks: its text one word per chunk, its tool calls in one, then the finish. */
const chunksOf = (response: ModelResponse.ProviderResponse): ReadonlyArray<ModelResponse.ProviderChunk> => {
  const out: Array<ModelResponse.ProviderChunk> = wordsOf(response.text ?? "").map((text) => ({ text }))
  const calls = response.toolCalls ?? []
  if (calls.length > 0) {
    out.push({
      toolCalls: calls.map((call, index) => ({ index, id: call.id, name: call.name, arguments: call.arguments }))
    })
  }
  out.push({
    finishReason: response.finishReason,
    usage: response.usage,
    model: response.model,
    refusal: response.refusal
  })
  return out
}

/**
 * A step computed from the request (e.g. to echo the prompt).
 *
 * @category constructors
 * @since 0.1.0
 */
export const respond = (f: (request: LanguageModel.Request) => Step): Step => ({ _tag: "Respond", respond: f })

/**
 * A step answered after `delay` (Effect's Clock: under `it.effect`, advance
 * the TestClock), e.g. to run into an attempt timeout.
 *
 * @category constructors
 * @since 0.1.0
 */
export const delayed = (delay: Duration.Input, step: Step): Step => ({ _tag: "Delayed", delay, step })

/**
 * The script was not used exactly: replies were left unused (`asked <
 * scripted`) or the model was asked more often than scripted.
 *
 * @category errors
 * @since 0.1.0
 */
export class ScriptMismatch extends Schema.TaggedError<ScriptMismatch>()("ScriptMismatch", {
  message: Schema.String,
  asked: Schema.Int,
  scripted: Schema.Int
}) {}

/**
 * A scripted model.
 *
 * - `model`: the `LanguageModel` service; `layer` provides it.
 * - `requests`: every request received so far, in order (also those past
 *   the end of the script).
 * - `assertDone`: fails with {@link ScriptMismatch} unless every step was
 *   used and no call went past the end.
 *
 * @category models
 * @since 0.1.0
 */
export interface ScriptedModel {
  readonly model: LanguageModel.LanguageModel["Service"]
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  readonly requests: Effect.Effect<ReadonlyArray<LanguageModel.Request>>
  readonly assertDone: Effect.Effect<void, ScriptMismatch>
}

/**
 * The recording of a scripted model provided by {@link layer}.
 *
 * @category services
 * @since 0.1.0
 */
export class Recording extends Context.Service<
  Recording,
  {
    readonly requests: Effect.Effect<ReadonlyArray<LanguageModel.Request>>
    readonly assertDone: Effect.Effect<void, ScriptMismatch>
  }
>()("@rolecraft/testing/ScriptedModel/Recording") {}

/**
 * Makes a scripted model. Each model call takes the next step; a call past
 * the end fails with `ExecutionFailure` "scripted model exhausted: asked N
 * times, scripted M" (and `assertDone` reports it).
 *
 * - `options.model`: the default model name (requests naming none use it).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ScriptedModel } from "@rolecraft/testing"
 *
 * const program = Effect.gen(function* () {
 *   const scripted = yield* ScriptedModel.make([
 *     ScriptedModel.fail(429, { retryAfter: "1 second" }),
 *     ScriptedModel.reply("Pack layers.", { usage: { inputTokens: 12, outputTokens: 3 } })
 *   ])
 *   // ... run an agent with Effect.provide(scripted.layer) ...
 *   yield* scripted.assertDone
 * })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  script: ReadonlyArray<Step>,
  options?: { readonly model?: string | undefined }
): Effect.Effect<ScriptedModel> =>
  Effect.gen(function* () {
    const steps = [...script]
    const state = yield* Ref.make<{ readonly requests: ReadonlyArray<LanguageModel.Request>; readonly ids: number }>({
      requests: [],
      ids: 0
    })

    const answer = (
      step: Step,
      call: LanguageModel.ProviderCall
    ): Effect.Effect<ModelResponse.ProviderResponse, unknown> => {
      switch (step._tag) {
        case "Reply":
          return Effect.succeed({
            text: step.text,
            usage: step.usage,
            finishReason: step.finishReason ?? "stop",
            model: step.model ?? call.model
          })
        case "ToolCalls":
          return Effect.map(
            Ref.modify(state, (s) => [s.ids, { ...s, ids: s.ids + step.calls.length }]),
            (before) => ({
              text: step.text ?? "",
              toolCalls: step.calls.map((tool, i) => render(tool, before + i + 1)),
              usage: step.usage,
              finishReason: "tool_calls",
              model: call.model
            })
          )
        case "Fail":
          return Effect.fail(
            typeof step.failure === "number"
              ? LanguageModel.httpFailure({
                  action: call.action,
                  status: step.failure,
                  message: `scripted HTTP ${step.failure}`,
                  retryAfter: step.retryAfter === undefined ? undefined : Duration.fromInputUnsafe(step.retryAfter)
                })
              : step.failure
          )
        case "Respond":
          return Effect.suspend(() => answer(step.respond(call.request), call))
        case "Delayed":
          return Effect.andThen(Effect.sleep(step.delay), answer(step.step, call))
        case "Chunks":
          return LanguageModel.fromChunks(step.chunks, call.action)
      }
    }

    const streamOf = (
      step: Step,
      call: LanguageModel.ProviderCall
    ): Stream.Stream<ModelResponse.ProviderChunk, unknown> => {
      switch (step._tag) {
        case "Chunks": {
          const given = Stream.fromIterable(step.chunks)
          return step.stall ? Stream.concat(given, Stream.never) : given
        }
        case "Respond":
          return Stream.suspend(() => streamOf(step.respond(call.request), call))
        case "Delayed":
          return Stream.concat(
            Stream.fromEffect(Effect.sleep(step.delay)).pipe(Stream.drain),
            streamOf(step.step, call)
          )
        default:
          return Stream.flatMap(Stream.fromEffect(answer(step, call)), (response) =>
            Stream.fromIterable(chunksOf(response))
          )
      }
    }

    const next = (call: LanguageModel.ProviderCall): Effect.Effect<Step, ActionError.ActionError> =>
      Effect.flatMap(
        Ref.modify(state, (s) => [s.requests.length, { ...s, requests: [...s.requests, call.request] }]),
        (index) => {
          const step = steps[index]
          return step === undefined
            ? Effect.fail(
                new ActionError.ExecutionFailure({
                  action: call.action,
                  message: `scripted model exhausted: asked ${index + 1} times, scripted ${steps.length}`
                })
              )
            : Effect.succeed(step)
        }
      )

    const model = LanguageModel.make(
      {
        generate: (call) => Effect.flatMap(next(call), (step) => answer(step, call)),
        stream: (call) => Stream.unwrap(Effect.map(next(call), (step) => streamOf(step, call)))
      },
      { name: "scripted", model: options?.model }
    )

    const requests = Effect.map(Ref.get(state), (s) => s.requests)
    const assertDone = Effect.flatMap(requests, (received) =>
      received.length === steps.length
        ? Effect.void
        : Effect.fail(
            new ScriptMismatch({
              asked: received.length,
              scripted: steps.length,
              message:
                received.length < steps.length
                  ? `scripted model: ${steps.length - received.length} of ${steps.length} scripted replies left unused (asked ${received.length} times)`
                  : `scripted model exhausted: asked ${received.length} times, scripted ${steps.length}`
            })
          )
    )
    return { model, layer: Layer.succeed(LanguageModel.LanguageModel, model), requests, assertDone }
  })

/**
 * A layer providing a scripted model and its {@link Recording}.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ScriptedModel } from "@rolecraft/testing"
 *
 * const Model = ScriptedModel.layer([
 *   ScriptedModel.toolCalls([{ name: "nights", arguments: { checkIn: "2026-05-12", checkOut: "2026-05-15" } }]),
 *   ScriptedModel.reply("That is 3 nights."),
 *   ScriptedModel.fail(429, { retryAfter: "2 seconds" })
 * ])
 * const check = Effect.gen(function* () {
 *   const recording = yield* ScriptedModel.Recording
 *   yield* recording.assertDone // fails unless every step was used
 * }).pipe(Effect.provide(Model))
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  script: ReadonlyArray<Step>,
  options?: { readonly model?: string | undefined }
): Layer.Layer<LanguageModel.LanguageModel | Recording> =>
  Layer.effectContext(
    Effect.map(make(script, options), (scripted) =>
      Context.make(LanguageModel.LanguageModel, scripted.model).pipe(
        Context.add(Recording, Recording.of({ requests: scripted.requests, assertDone: scripted.assertDone }))
      )
    )
  )
