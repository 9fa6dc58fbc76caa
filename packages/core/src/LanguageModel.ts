/**
 * The language model service: one `generate` call takes a list of messages
 * (and, in chat turns, the tools offered) and returns the model's text, its
 * tool calls, the token usage and why it stopped; `stream` makes the same call
 * and yields the answer as it arrives (text deltas, tool calls as they start
 * and their argument fragments), ending with the whole response.
 *
 * Every implementation is built with {@link make} from a provider function —
 * the openai layer in `@rolecraft/openai` and the scripted model in
 * `@rolecraft/testing` alike — so what is common lives here once: the
 * `chat {model}` span, mapping a provider's untyped failure to an
 * `ActionError`, removing secrets from errors, normalising usage, recording
 * usage into the current {@link UsageMeter}, and aborting the provider's
 * request when the call is interrupted (attempt timeouts included).
 *
 * The messages a request carries are `Prompt`'s.
 *
 * @example
 * ```ts
import { LanguageModel } from "@rolecraft/core"
 * import { Effect } from "effect"
 *
 * // one call of whichever model layer is provided
 * const program = Effect.gen(function* () {
 *   const model = yield* LanguageModel.LanguageModel
 *   const response = yield* model.generate({
 *     messages: [
 *       { role: "system", content: "Answer in one sentence." },
 *       { role: "user", content: "What is the capital of Portugal?" }
 *     ]
 *   })
 *   return response.text
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as ProviderProfile from "./ProviderProfile.ts"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { type ActionError, ExecutionFailure, type TransientFailure } from "./ActionError.ts"
import type * as ActionResponse from "./ActionResponse.ts"
import * as Redact from "./internal/redact.ts"
import * as Telemetry from "./internal/events/telemetry.ts"
import * as Callback from "./internal/callback.ts"
import type * as JsonSchema from "effect/JsonSchema"
import * as CallLimits from "./internal/model/callLimits.ts"
import * as HttpFailure from "./internal/model/httpFailure.ts"
import { capped, defaultMaxReplyCharacters, normalise } from "./internal/model/provider.ts"
import * as StreamReader from "./internal/model/streamReader.ts"
import type { ProviderChunk, ProviderResponse, Response, StreamPart } from "./ModelResponse.ts"
import type * as Prompt from "./Prompt.ts"

// =============================================================================
// Requests and responses
// =============================================================================

/**
 * Whether and which tool the model must call: `"auto"` (the provider's
 * default when tools are given), `"none"`, `"required"` (some tool), or
 * `{ tool: name }` (that model-facing tool name).
 *
 * @category models
 * @since 0.1.0
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly tool: string }

/**
 * A JSON Schema for a tool's arguments as a model sees it: always an object
 * schema with `properties`, with no `$ref`, `$defs`, `$schema` or `$id` left.
 *
 * @category tools
 * @since 0.1.0
 */
export interface JsonSchemaObject {
  readonly type: "object"
  readonly properties: { readonly [name: string]: JsonSchema.JsonSchema | boolean }
  readonly [keyword: string]: unknown
}

/**
 * What a model is offered for one tool: what a provider sends the API.
 *
 * - `name`: the model-facing name, valid for the provider APIs
 *   (`^[a-zA-Z0-9_-]{1,64}$`) and unique among the tools of a request; a
 *   tool call names it.
 * - `description`: shown to the model as is.
 * - `parameters`: the JSON Schema of the arguments (an object schema with
 *   every `$ref` inlined).
 * - `strict`: whether the provider's strict mode is asked for.
 *
 * `ActionTool.ActionTool` is this shape plus the action a call runs.
 *
 * @category tools
 * @since 0.1.0
 */
export interface Tool {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchemaObject
  readonly strict: boolean
}

/**
 * One call to the model.
 *
 * - `messages`: the conversation so far, in order.
 * - `tools`: what the model may call ({@link Tool}s with unique names); none
 *   for an llm action.
 * - `model`: the model name; default the implementation's own (e.g. the
 *   openai layer's `model`).
 * - `temperature`: sent only when given; otherwise the provider's own setting
 *   applies.
 * - `toolChoice`: see {@link ToolChoice}; sent only when given.
 * - `action`: on whose behalf the call is made (an action name, or a chat
 *   turn's); it names the call's errors and span. Default `"LanguageModel"`.
 * - `responseFormat`: ask for a reply that is JSON matching a schema (see
 *   {@link ResponseFormat}); sent only when given.
 * - `maxTokens`: the most tokens the reply may use (an integer >= 1; the
 *   openai layer sends it as `max_completion_tokens`); sent only when given,
 *   otherwise the provider's own limit applies. A reply that used exactly
 *   this many output tokens was cut at the limit: its finish reason is
 *   `"length"`, whatever the provider said.
 * - `parallelToolCalls`: `false` asks the model for at most one tool call
 *   per reply, sent as the provider's profile spells it
 *   (`ProviderProfile.parallelCalls`; the openai layer sends
 *   `parallel_tool_calls: false`), only with tools; sent only when given.
 *
 * @category models
 * @since 0.1.0
 */
export interface Request {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly tools?: ReadonlyArray<Tool> | undefined
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly action?: string | undefined
  readonly responseFormat?: ResponseFormat | undefined
  readonly maxTokens?: number | undefined
  readonly parallelToolCalls?: boolean | undefined
}

/**
 * A structured reply asked of the model: JSON matching `schema` (an object
 * schema, as projected for tools), `name` naming it (letters, digits, `_`
 * and `-`, at most 64 characters), `strict` asking the provider to hold the
 * reply to the schema exactly (the OpenAI API's `response_format: {
 * type: "json_schema", json_schema: { name, schema, strict } }`).
 *
 * @category models
 * @since 0.1.0
 */
export interface ResponseFormat {
  readonly name: string
  readonly schema: JsonSchemaObject
  readonly strict: boolean
  readonly description?: string | undefined
}

/**
 * Tokens of one call (or summed over several). Counts are integers >= 0.
 *
 * @category models
 * @since 0.1.0
 */
export type Usage = ActionResponse.Usage

/**
 * The language model service.
 *
 * `generate(request)` makes one model call. It fails with an `ActionError`
 * (`action` = `request.action`): TIMEOUT, TRANSIENT (408, 429 with
 * `retryAfter`, 5xx, connection failures) or EXECUTION (other refusals,
 * 409 included, a malformed answer, any other provider failure); interruption aborts the
 * provider's request and stays interruption. It never retries by itself:
 * retries belong to the calling action's resilience policy.
 *
 * `stream(request)` makes the same call and yields `ModelResponse.StreamPart`s as
 * the answer arrives, `Finished` last. Besides the failures of `generate`,
 * a stream that ends before the model said it was finished (a connection
 * closed mid-answer) is TRANSIENT, a stream silent past its idle limit is
 * TIMEOUT, and a tool call whose name never arrived is EXECUTION (it is
 * never returned, so never run). Interrupting the stream,
 * or no longer pulling it, aborts the provider's request. Over a provider
 * that cannot stream, the stream is one `generate` call: one text delta,
 * each tool call started with all its arguments, then `Finished`.
 *
 * `secrets` (optional, since 0.2.0): the secrets the model holds — its
 * provider's API key. A model made with {@link make} declares the `secrets`
 * it was given. The agent counts them among the secrets it knows and
 * replaces them with `[REDACTED]` in every string it lets out (errors,
 * events, spans, logs, tool messages), whatever action or hook quoted them.
 *
 * Required by llm actions and by an agent's chat turns (it is in their
 * `R`), unless the agent has its own model (`Agent.make({ model })`), which
 * it then provides itself.
 *
 * @category services
 * @since 0.1.0
 */
export class LanguageModel extends Context.Service<
  LanguageModel,
  {
    readonly generate: (request: Request) => Effect.Effect<Response, ActionError>
    readonly stream: (request: Request) => Stream.Stream<StreamPart, ActionError>
    readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
    /** What the layer declares about its provider API (tool limit, how it is told "no parallel calls"). */
    readonly profile?: ProviderProfile.ProviderProfile | undefined
  }
>()("@rolecraft/core/LanguageModel") {}

// =============================================================================
// Usage meter
// =============================================================================

/**
 * Sums the usage of every model call made while it is in the context. The
 * agent provides one per `execute` call of an llm action (for
 * `ActionResponse.usage`); a chat turn provides one per turn. A meter made
 * with {@link makeUsageMeter} inside another one also adds to the outer one.
 *
 * - `record(usage)`: adds one call's usage.
 * - `total`: the sum so far, and how many calls were recorded.
 *
 * @category services
 * @since 0.1.0
 */
export class UsageMeter extends Context.Service<
  UsageMeter,
  {
    readonly record: (usage: Usage) => Effect.Effect<void>
    readonly total: Effect.Effect<{ readonly usage: Usage; readonly calls: number }>
  }
>()("@rolecraft/core/LanguageModel/UsageMeter") {}

const zero: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

/**
 * Adds two usages, count by count.
 *
 * @category combinators
 * @since 0.1.0
 */
export const addUsage = (self: Usage, that: Usage): Usage => {
  const sum: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: self.inputTokens + that.inputTokens,
    outputTokens: self.outputTokens + that.outputTokens,
    totalTokens: self.totalTokens + that.totalTokens
  }
  // A part is present when either side reports it.
  for (const part of usageParts) {
    const a = self[part]
    const b = that[part]
    if (a !== undefined || b !== undefined) sum[part] = (a ?? 0) + (b ?? 0)
  }
  return sum
}

const usageParts = ["cachedInputTokens", "cacheWriteInputTokens", "reasoningTokens"] as const

/**
 * A fresh meter at zero. When a meter is already in the context, what is
 * recorded into the new one is recorded into that one too.
 *
 * @category constructors
 * @since 0.1.0
 */
export const makeUsageMeter: Effect.Effect<UsageMeter["Service"]> = Effect.map(
  Effect.serviceOption(UsageMeter),
  (parent) => {
    const state = Ref.makeUnsafe({ usage: zero, calls: 0 })
    const own = (usage: Usage) => Ref.update(state, (s) => ({ usage: addUsage(s.usage, usage), calls: s.calls + 1 }))
    return UsageMeter.of({
      record: Option.isSome(parent) ? (usage) => Effect.andThen(own(usage), parent.value.record(usage)) : own,
      total: Ref.get(state)
    })
  }
)

// =============================================================================
// Building a model from a provider
// =============================================================================

/**
 * What a provider is asked: the `request` as given, the `model` to use
 * (`request.model`, else the default given to {@link make}; `undefined` when
 * neither says), the `action` that names errors, and a `signal` aborted when
 * the call is interrupted (the provider must pass it on to its HTTP request).
 *
 * @category models
 * @since 0.1.0
 */
export interface ProviderCall {
  readonly request: Request
  readonly model: string | undefined
  readonly action: string
  readonly signal: AbortSignal
}

/**
 * A provider: makes one model call. It may return a value, a Promise or an
 * Effect. An `ActionError` it fails with passes through (build it with
 * {@link httpFailure} for HTTP statuses); any other failure, throw, rejection
 * or defect becomes EXECUTION.
 *
 * @category models
 * @since 0.1.0
 */
export type Provider = (
  call: ProviderCall
) => ProviderResponse | PromiseLike<ProviderResponse> | Effect.Effect<ProviderResponse, unknown>

/**
 * A streaming provider: makes one model call and yields its chunks, as an
 * Effect `Stream` or any async iterable (an async iterable costs no effect
 * per chunk). It must pass `call.signal` on to its HTTP request, and end its
 * stream when the signal aborts: the signal aborts when the stream is
 * interrupted or no longer pulled, and when the call passes its deadline or
 * idle limit (the call then fails with TIMEOUT whatever the stream does; a
 * stream that ignores the signal and stays silent is bounded only by the
 * calling action's attempt timeout). An `ActionError` it fails with passes
 * through; any other failure becomes EXECUTION. The stream must say a
 * finish reason before it ends: one that ends without is taken as cut off
 * (TRANSIENT).
 *
 * @category models
 * @since 0.1.0
 */
export type StreamProvider = (
  call: ProviderCall
) => Stream.Stream<ProviderChunk, unknown> | AsyncIterable<ProviderChunk>

/**
 * A provider that may stream: `generate` answers `generate` calls, `stream`
 * answers `stream` calls. Give at least one: without `stream`, a stream is
 * one `generate` call; without `generate`, a `generate` call is the stream
 * run to its end.
 *
 * @category models
 * @since 0.1.0
 */
export interface Providers {
  readonly generate?: Provider | undefined
  readonly stream?: StreamProvider | undefined
}

/**
 * Options of {@link make}.
 *
 * - `name`: the provider's name, for the span and metrics
 *   (`gen_ai.provider.name`); default `"unknown"`.
 * - `model`: the default model name, used when a request names none.
 * - `secrets`: secrets the provider holds (its API key): every error is
 *   scrubbed of them (their text, base64 and URL-encoded forms) before it
 *   leaves, so they never reach errors, spans or logs; the service declares
 *   them (`secrets`), so an agent redacts them too wherever its own code,
 *   hooks or other actions quote them.
 * - `timeout`: the whole-call deadline, generated or streamed, from the call
 *   to the last chunk; default 10 minutes; past it the call is interrupted
 *   (its request aborted) and fails with TIMEOUT.
 * - `idleTimeout`: how long a stream may send nothing (no chunk) before the
 *   call is interrupted with TIMEOUT; default 2 minutes.
 * - `maxReplyCharacters`: the cap on one reply's size — its text,
 *   reasoning, refusal and tool-call arguments together — counted as a
 *   stream arrives; default 1,000,000; past it the call fails with
 *   EXECUTION naming the cap (a stream is aborted there).
 * - `profile`: what the layer declares about its provider API (see
 *   `ProviderProfile`); default `ProviderProfile.unknown`.
 *
 * @category models
 * @since 0.1.0
 */
export interface MakeOptions {
  readonly name?: string | undefined
  readonly model?: string | undefined
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
  readonly timeout?: Duration.Input | undefined
  readonly idleTimeout?: Duration.Input | undefined
  readonly maxReplyCharacters?: number | undefined
  readonly profile?: ProviderProfile.ProviderProfile | undefined
}

const defaultAction = "LanguageModel"

/**
 * The parts a whole answer streams as when it was not streamed: one
 * reasoning delta (none without reasoning), one text delta (none for `""`),
 * each tool call started with all its arguments (as one delta, none for
 * `""`), then `Finished`.
 *
 * @category combinators
 * @since 0.1.0
 */
export const partsOf = (response: Response): ReadonlyArray<StreamPart> => {
  const parts: Array<StreamPart> = []
  if (response.reasoning !== undefined && response.reasoning !== "") {
    parts.push({ _tag: "ReasoningDelta", delta: response.reasoning })
  }
  if (response.text !== "") parts.push({ _tag: "TextDelta", delta: response.text })
  response.toolCalls.forEach((call, index) => {
    parts.push({ _tag: "ToolCallArgumentsStarted", index, id: call.id, name: call.name })
    if (call.arguments !== "") parts.push({ _tag: "ToolCallArgumentsDelta", index, id: call.id, delta: call.arguments })
  })
  parts.push({ _tag: "Finished", response })
  return parts
}

/**
 * The response a list of streamed chunks adds up to, read as a streaming
 * provider's are (see `ModelResponse.ProviderChunk`); fails as such a stream would
 * (no finish reason: TRANSIENT; a malformed chunk, a tool call without a
 * name or a reply past 1,000,000 characters: EXECUTION). `action` names the
 * errors (default `"LanguageModel"`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromChunks = (
  chunks: Iterable<ProviderChunk>,
  action: string = defaultAction
): Effect.Effect<Response, ActionError> =>
  collect(StreamReader.joined(StreamReader.reader({ action }), action, Stream.fromIterable(chunks)))

/**
 * The response of a streamed answer: its `Finished` part. A stream that ends
 * without one (never one of this service's streams) is a defect.
 *
 * @category combinators
 * @since 0.1.0
 */
export const collect = <E, R>(stream: Stream.Stream<StreamPart, E, R>): Effect.Effect<Response, E, R> =>
  Stream.runFold(
    stream,
    (): Response | undefined => undefined,
    (last, part) => (part._tag === "Finished" ? part.response : last)
  ).pipe(
    Effect.flatMap((response) =>
      response === undefined
        ? Effect.die(new Error("a model stream ended without its Finished part"))
        : Effect.succeed(response)
    )
  )

// =============================================================================
// Making the service
// =============================================================================

/**
 * Builds the service from a provider: a function answering `generate`
 * calls, or {@link Providers} (`generate`, `stream`, or both). The openai
 * layer and the scripted test model are both made with it, so a test runs
 * the same span, error mapping and usage metering as production.
 *
 * Each `generate` call:
 * - runs in a span `chat {model}` (`chat` when no model is known; kind
 *   client) with the OpenTelemetry GenAI attributes `gen_ai.operation.name`
 *   (`chat`), `gen_ai.provider.name`, `gen_ai.request.model`,
 *   `gen_ai.request.temperature` (when given) and `rolecraft.action`; on
 *   success `gen_ai.response.model`, `gen_ai.response.finish_reasons`,
 *   `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`, and, when the
 *   provider reports them, `gen_ai.usage.cache_read.input_tokens`,
 *   `gen_ai.usage.cache_creation.input_tokens` and
 *   `gen_ai.usage.reasoning.output_tokens` (parts of the input and output
 *   counts, never on top of them); on failure
 *   `error.type` (the category); message contents are never attributes;
 * - records `gen_ai.client.token.usage`, `rolecraft.client.token.usage.parts`
 *   and `gen_ai.client.operation.duration` (see `Metrics`);
 * - passes the provider a signal aborted on interruption (an attempt timeout
 *   interrupts, so the HTTP request is aborted; the provider must honour it);
 * - maps failures: an `ActionError` passes through; anything else is
 *   `ExecutionFailure` ("model call failed: …"); every error is scrubbed of
 *   `options.secrets` (and, for a call an agent makes, of every secret the
 *   agent knows) before the span records it;
 * - normalises the answer (see `ModelResponse.ProviderResponse`) and records its
 *   usage into the current {@link UsageMeter}, if any.
 *
 * Each `stream` call does the same in a `chat {model}` span (without the
 * metrics), reads the provider's chunks (see `ModelResponse.ProviderChunk`:
 * fragments by index or by id, ids and names from whichever fragment
 * carries them, the last usage seen) and aborts the provider's request when
 * the stream is interrupted or no longer pulled. A malformed chunk is
 * EXECUTION naming the field.
 *
 * Every call is bounded (see {@link MakeOptions}): a whole-call deadline, an
 * idle limit between a stream's chunks, and a cap on the reply's size,
 * checked as it arrives. It does not retry: the calling action's resilience
 * policy does, and its attempt timeout, usually shorter, applies too.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { LanguageModel } from "@rolecraft/core"
 *
 * const echo = LanguageModel.make(({ request }) => ({
 *   text: request.messages.map((message) => message.content).join("\n"),
 *   usage: { inputTokens: 3, outputTokens: 3 }
 * }), { name: "echo" })
 * const EchoLayer = Layer.succeed(LanguageModel.LanguageModel, echo)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (provider: Provider | Providers, options?: MakeOptions): LanguageModel["Service"] => {
  const setup: Setup = {
    providers: typeof provider === "function" ? { generate: provider } : provider,
    secrets: options?.secrets ?? [],
    providerName: options?.name ?? "unknown",
    model: options?.model,
    limits: {
      timeout: Duration.fromInputUnsafe(options?.timeout ?? CallLimits.defaultTimeout),
      idleTimeout: Duration.fromInputUnsafe(options?.idleTimeout ?? CallLimits.defaultIdleTimeout)
    },
    maxReplyCharacters: options?.maxReplyCharacters ?? defaultMaxReplyCharacters
  }
  return LanguageModel.of({
    generate: (request) => generateWith(setup, request),
    stream: (request) => streamWith(setup, request),
    secrets: setup.secrets,
    profile: options?.profile ?? ProviderProfile.unknown
  })
}

/** What every call of one service made by {@link make} shares: its providers and options. */
interface Setup {
  readonly providers: Providers
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  readonly providerName: string
  readonly model: string | undefined
  readonly limits: CallLimits.CallLimits
  readonly maxReplyCharacters: number
}

const callOf = (setup: Setup, request: Request, signal: AbortSignal): ProviderCall => ({
  request,
  model: request.model ?? setup.model,
  action: request.action ?? defaultAction,
  signal
})

/** The provider's answer, normalised, within the whole-call deadline; from its `generate`, else its stream. */
const generated = (setup: Setup, request: Request): Effect.Effect<Response, ActionError> => {
  const generate = setup.providers.generate
  if (generate !== undefined) {
    const action = request.action ?? defaultAction
    return CallLimits.deadline(
      Effect.flatMap(
        Callback.fromReturned<ProviderResponse>(action, "model call", (signal) =>
          generate(callOf(setup, request, signal))
        ),
        (raw) => {
          const response = normalise(action, raw, setup.maxReplyCharacters)
          return response instanceof ExecutionFailure
            ? Effect.fail(response)
            : Effect.succeed(capped(response, request.maxTokens))
        }
      ),
      action,
      setup.limits
    )
  }
  return collect(streamed(setup, request))
}

/** The provider's answer as parts: its stream read within the call's limits, else its `generate` answer in parts. */
const streamed = (setup: Setup, request: Request): Stream.Stream<StreamPart, ActionError> => {
  const stream = setup.providers.stream
  if (stream === undefined) {
    return Stream.flatMap(Stream.fromEffect(generated(setup, request)), (response) =>
      Stream.fromArray(partsOf(response))
    )
  }
  const action = request.action ?? defaultAction
  return Stream.unwrap(
    Effect.gen(function* () {
      // Set once the provider's stream has ended: its request is over, and there is nothing left to abort
      // (an abort costs an exception with its stack, in the provider's HTTP client as well).
      let ended = false
      const controller = yield* Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (controller) => (ended ? Effect.void : Effect.sync(() => controller.abort()))
      )
      const source = yield* Effect.try({
        try: () => stream(callOf(setup, request, controller.signal)),
        catch: (thrown) => StreamReader.streamFailure(action, thrown)
      })
      const read = StreamReader.reader({
        action,
        maxReplyCharacters: setup.maxReplyCharacters,
        maxTokens: request.maxTokens,
        now: yield* CallLimits.clockNow
      })
      yield* CallLimits.watch(read, action, setup.limits, () => controller.abort())
      return StreamReader.joined(
        read,
        action,
        Stream.isStream(source) ? source : Stream.fromAsyncIterable(source, (error) => error),
        () => {
          ended = true
        }
      )
    })
  )
}

/** Adds a response's usage to the current {@link UsageMeter}, if any. */
const record = (response: Response) =>
  Effect.flatMap(Effect.serviceOption(UsageMeter), (meter) =>
    Option.isSome(meter) ? meter.value.record(response.usage) : Effect.void
  )

/** What the `chat {model}` span says of a call, and of its answer. */
const callSpan = (setup: Setup, request: Request) => {
  const model = request.model ?? setup.model
  return {
    call: {
      provider: setup.providerName,
      model,
      action: request.action ?? defaultAction,
      temperature: request.temperature
    },
    answer: (response: Response) => ({
      model: response.model ?? model,
      finishReason: response.finishReason,
      inputTokens: response.usage.inputTokens,
      outputTokens: response.usage.outputTokens,
      cachedInputTokens: response.usage.cachedInputTokens,
      cacheWriteInputTokens: response.usage.cacheWriteInputTokens,
      reasoningTokens: response.usage.reasoningTokens
    })
  }
}

const generateWith = (setup: Setup, request: Request): Effect.Effect<Response, ActionError> => {
  const { call, answer } = callSpan(setup, request)
  return generated(setup, request).pipe(
    Effect.tap(record),
    Effect.catch((error) => Effect.flip(Redact.scrubKnown(error, setup.secrets))),
    Telemetry.chat(call, answer)
  )
}

const streamWith = (setup: Setup, request: Request): Stream.Stream<StreamPart, ActionError> => {
  const { call, answer } = callSpan(setup, request)
  // The same `chat {model}` span as `generate`'s, annotated with the answer when it finishes.
  return streamed(setup, request).pipe(
    // Read per batch, not per part: `Finished` is the last part of the stream, so of its batch.
    Stream.mapArrayEffect((parts) => {
      const last = parts[parts.length - 1]
      if (last?._tag !== "Finished") return Effect.succeed(parts)
      const answered = answer(last.response)
      return Effect.as(
        Effect.andThen(
          Effect.annotateCurrentSpan({
            "gen_ai.response.model": answered.model ?? "",
            "gen_ai.response.finish_reasons": [answered.finishReason],
            "gen_ai.usage.input_tokens": answered.inputTokens,
            "gen_ai.usage.output_tokens": answered.outputTokens,
            ...Telemetry.usagePartsOf(answered)
          }),
          record(last.response)
        ),
        parts
      )
    }),
    Stream.catch((error) => Stream.fromEffect(Effect.flip(Redact.scrubKnown(error, setup.secrets)))),
    Stream.withSpan(call.model === undefined ? "chat" : `chat ${call.model}`, {
      kind: "client",
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": call.provider,
        ...(call.model === undefined ? {} : { "gen_ai.request.model": call.model }),
        "rolecraft.action": call.action
      },
      captureStackTrace: false
    })
  )
}

/**
 * A layer of the service made by {@link make}.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (provider: Provider | Providers, options?: MakeOptions): Layer.Layer<LanguageModel> =>
  Layer.succeed(LanguageModel, make(provider, options))

/**
 * The failure of a model call answered with a non-2xx HTTP status, in the
 * action error categories: 408, 429 and 5xx are `TransientFailure`
 * (retryable; `retryAfter` is the server's requested wait, when given);
 * every other status is `ExecutionFailure` carrying the status and `excerpt`
 * (the provider's error message, cut to 200 characters).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LanguageModel } from "@rolecraft/core"
 *
 * // A provider over some HTTP API: its non-2xx answers become action errors.
 * const model = LanguageModel.make(({ action }) =>
 *   Effect.fail(LanguageModel.httpFailure({ action, status: 429, message: "rate limited" }))
 * )
 * ```
 *
 * @category wire format
 * @since 0.1.0
 */
export const httpFailure: (options: {
  readonly action: string
  readonly status: number
  readonly message: string
  readonly retryAfter?: Duration.Duration | undefined
}) => TransientFailure | ExecutionFailure = HttpFailure.httpFailure

/**
 * The wait a transient HTTP answer (429, 503) asks for, to pass to
 * {@link httpFailure} as `retryAfter`: `retry-after-ms` (milliseconds) when
 * valid, else `Retry-After` as delta-seconds or an HTTP date measured from
 * `nowMs` (never negative). Malformed or absent values give `undefined`, so
 * the retry policy's backoff applies. Takes a fetch `Headers`, Effect
 * `Headers` or a record of header values.
 *
 * @category wire format
 * @since 0.1.0
 */
export const retryAfter: (
  headers: Iterable<readonly [string, string]> | Readonly<Record<string, string | undefined>> | undefined,
  nowMs: number
) => Duration.Duration | undefined = HttpFailure.retryAfter
