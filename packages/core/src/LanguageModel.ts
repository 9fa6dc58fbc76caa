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
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type ActionError, ExecutionFailure, isActionError, TransientFailure } from "./ActionError.ts"
import type * as ActionResponse from "./ActionResponse.ts"
import * as Redact from "./internal/redact.ts"
import * as Telemetry from "./internal/events/telemetry.ts"
import { shorten } from "./internal/text.ts"
import * as Callback from "./internal/callback.ts"
import type * as JsonSchema from "effect/JsonSchema"
import * as HttpResponse from "./internal/httpResponse.ts"

// =============================================================================
// Messages
// =============================================================================

/**
 * A tool call as the model sent it: the call's `id` (answered by exactly one
 * {@link ToolMessage}), the model-facing tool `name` ({@link Toolkit}'s `keyOf`
 * maps it back) and the raw `arguments` string exactly as sent — possibly
 * `""`, malformed or not an object (the agent parses it strictly and answers
 * a malformed one with a VALIDATION tool message).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

/**
 * @category models
 * @since 0.1.0
 */
export type ToolCall = typeof ToolCall.Type

/**
 * The system message: instructions for the whole exchange.
 *
 * @category schemas
 * @since 0.1.0
 */
export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.String
})

/**
 * @category models
 * @since 0.1.0
 */
export type SystemMessage = typeof SystemMessage.Type

/**
 * A user message.
 *
 * @category schemas
 * @since 0.1.0
 */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.String
})

/**
 * @category models
 * @since 0.1.0
 */
export type UserMessage = typeof UserMessage.Type

/**
 * A reply of the model: its text (`""` when it only called tools) and the
 * tool calls it made, if any.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.String,
  toolCalls: Schema.optionalKey(Schema.Array(ToolCall))
})

/**
 * @category models
 * @since 0.1.0
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * The answer to one tool call: `toolCallId` is the call's `id`, `content`
 * the result (or `{"error":{…}}`) as text.
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  toolCallId: Schema.String,
  content: Schema.String
})

/**
 * @category models
 * @since 0.1.0
 */
export type ToolMessage = typeof ToolMessage.Type

/**
 * Any message of a conversation. A schema, so a message list handed back by
 * a caller (a chat history) can be decoded before it is used.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Message = Schema.Union([SystemMessage, UserMessage, AssistantMessage, ToolMessage])

/**
 * @category models
 * @since 0.1.0
 */
export type Message = typeof Message.Type

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
 * @since 0.1.0
 */
export interface JsonSchemaObject {
  readonly type: "object"
  readonly properties: { readonly [name: string]: JsonSchema.JsonSchema | boolean }
  readonly [keyword: string]: unknown
}

/**
 * What a model is offered for one action or MCP tool.
 *
 * - `name`: the model-facing name, valid for the provider APIs
 *   (`^[a-zA-Z0-9_-]{1,64}$`) and unique within its {@link Toolkit}.
 * - `key`: the original name (an action key, or e.g. `"weather/get_forecast"`
 *   for an MCP tool); {@link Toolkit.keyOf} maps `name` back to it.
 * - `description`: shown to the model as is.
 * - `parameters`: the projected schema (JSON Schema with every `$ref` inlined).
 * - `strict`: whether the provider's strict mode is asked for (default `false`).
 *
 * @since 0.1.0
 */
export interface Tool {
  readonly name: string
  readonly key: string
  readonly description: string
  readonly parameters: JsonSchemaObject
  readonly strict: boolean
}

/**
 * An entry a toolkit could not offer, with the reason (an empty key, a
 * duplicate key, or a recursive schema).
 *
 * @since 0.1.0
 */
export interface ExcludedTool {
  readonly key: string
  readonly reason: string
}

/**
 * The tools offered to a model in one request.
 *
 * - `tools`: in entry order, without the excluded ones; names are unique.
 * - `excluded`: entries left out, each with its reason; the others still work.
 * - `keyOf(name)`: the original key of a model-facing name, `undefined` for a
 *   name that was never offered (the caller answers NOT_FOUND).
 *
 * @since 0.1.0
 */
export interface Toolkit {
  readonly tools: ReadonlyArray<Tool>
  readonly excluded: ReadonlyArray<ExcludedTool>
  readonly keyOf: (name: string) => string | undefined
}

/**
 * One call to the model.
 *
 * - `messages`: the conversation so far, in order.
 * - `tools`: what the model may call (a {@link Toolkit}'s `tools`); none for an llm
 *   action.
 * - `model`: the model name; default the implementation's own (e.g. the
 *   openai layer's `model`).
 * - `temperature`: sent only when given; otherwise the provider's own setting
 *   applies.
 * - `toolChoice`: see {@link ToolChoice}; sent only when given.
 * - `action`: on whose behalf the call is made (an action name, or a chat
 *   turn's); it names the call's errors and span. Default `"LanguageModel"`.
 * - `responseFormat`: ask for a reply that is JSON matching a schema (see
 *   {@link ResponseFormat}); sent only when given.
 *
 * @category models
 * @since 0.1.0
 */
export interface Request {
  readonly messages: ReadonlyArray<Message>
  readonly tools?: ReadonlyArray<Tool> | undefined
  readonly model?: string | undefined
  readonly temperature?: number | undefined
  readonly toolChoice?: ToolChoice | undefined
  readonly action?: string | undefined
  readonly responseFormat?: ResponseFormat | undefined
}

/**
 * A structured reply asked of the model: JSON matching `schema` (an object
 * schema, as projected for tools), `name` naming it (letters, digits, `_`
 * and `-`, at most 64 characters), `strict` asking the provider to hold the
 * reply to the schema exactly (the OpenAI API's `response_format: {
 * type: "json_schema", json_schema: { name, schema, strict } }`).
 *
 * @category models
 * @since 0.2.0
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
 * Why the model stopped: it finished (`"stop"`), hit its token limit
 * (`"length"`, the text is cut), called tools (`"tool_calls"`), had its reply
 * filtered (`"content_filter"`), or anything else a provider says (`"other"`).
 *
 * @category models
 * @since 0.1.0
 */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other"

/**
 * The model's answer.
 *
 * - `text`: the reply's text, `""` when there is none.
 * - `toolCalls`: the tool calls, in the model's order (empty when none).
 * - `usage`: this call's tokens (0 for counts the provider did not report;
 *   `totalTokens` defaults to input + output).
 * - `finishReason`: see {@link FinishReason}.
 * - `model`: the model that answered, when the provider says.
 * - `refusal`: the model's refusal message, when it refused.
 *
 * @category models
 * @since 0.1.0
 */
export interface Response {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly usage: Usage
  readonly finishReason: FinishReason
  readonly model?: string | undefined
  readonly refusal?: string | undefined
}

/**
 * One piece of a streamed answer (see {@link LanguageModel}'s `stream`):
 *
 * - `TextDelta`: the next piece of the reply's text;
 * - `ToolCallStarted`: a tool call whose id and name are known (`index` is
 *   its position in the reply);
 * - `ToolCallArgumentsDelta`: the next piece of that call's raw arguments
 *   (the pieces joined are `arguments`; the first one may carry what arrived
 *   before the call's name did);
 * - `Finished`: the whole answer, exactly as `generate` would return it —
 *   always the last part, exactly once.
 *
 * @category models
 * @since 0.2.0
 */
export type StreamPart =
  | { readonly _tag: "TextDelta"; readonly delta: string }
  | { readonly _tag: "ToolCallStarted"; readonly index: number; readonly id: string; readonly name: string }
  | { readonly _tag: "ToolCallArgumentsDelta"; readonly index: number; readonly id: string; readonly delta: string }
  | { readonly _tag: "Finished"; readonly response: Response }

/**
 * The language model service.
 *
 * `generate(request)` makes one model call. It fails with an `ActionError`
 * (`action` = `request.action`): TIMEOUT, TRANSIENT (408, 429 with
 * `retryAfter`, 5xx, connection failures) or EXECUTION (other refusals,
 * 409 included, a
 * malformed answer, any other provider failure); interruption aborts the
 * provider's request and stays interruption. It never retries by itself:
 * retries belong to the calling action's resilience policy.
 *
 * `stream(request)` makes the same call and yields {@link StreamPart}s as
 * the answer arrives, `Finished` last. Besides the failures of `generate`,
 * a stream that ends before the model said it was finished (a connection
 * closed mid-answer) is TRANSIENT, and a tool call whose name never arrived
 * is EXECUTION (it is never returned, so never run). Interrupting the stream,
 * or no longer pulling it, aborts the provider's request. Over a provider
 * that cannot stream, the stream is one `generate` call: one text delta,
 * each tool call started with all its arguments, then `Finished`.
 *
 * Read optionally by the agent: without it, llm actions and chat turns fail
 * with VALIDATION ("LanguageModel not provided").
 *
 * @category services
 * @since 0.1.0
 */
export class LanguageModel extends Context.Service<
  LanguageModel,
  {
    readonly generate: (request: Request) => Effect.Effect<Response, ActionError>
    readonly stream: (request: Request) => Stream.Stream<StreamPart, ActionError>
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
 * Adds two usages.
 *
 * @since 0.1.0
 */
export const addUsage = (self: Usage, that: Usage): Usage => ({
  inputTokens: self.inputTokens + that.inputTokens,
  outputTokens: self.outputTokens + that.outputTokens,
  totalTokens: self.totalTokens + that.totalTokens
})

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
 * What a provider answers; {@link make} normalises it into a {@link Response}.
 * Missing or `null` text is `""`; missing tool calls are none; usage counts
 * that are missing or not finite non-negative numbers are 0, and a missing
 * total is input + output; a missing finish reason is `"tool_calls"` when
 * there are tool calls, else `"stop"`; unknown reasons are `"other"`.
 *
 * @category models
 * @since 0.1.0
 */
export interface ProviderResponse {
  readonly text?: string | null | undefined
  readonly toolCalls?: ReadonlyArray<ToolCall> | undefined
  readonly usage?:
    | {
        readonly inputTokens?: number | null | undefined
        readonly outputTokens?: number | null | undefined
        readonly totalTokens?: number | null | undefined
      }
    | null
    | undefined
  readonly finishReason?: string | null | undefined
  readonly model?: string | null | undefined
  readonly refusal?: string | null | undefined
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
 * One fragment of a tool call in a streamed chunk: `index` says which call
 * it belongs to (fragments with the same index are one call); `id` and
 * `name` may come on any fragment (usually only the first); `arguments` is
 * the next piece of the raw arguments string.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolCallFragment {
  readonly index: number
  readonly id?: string | null | undefined
  readonly name?: string | null | undefined
  readonly arguments?: string | null | undefined
}

/**
 * One chunk of a streamed answer as a provider yields it: a piece of text
 * and of the refusal, tool-call fragments, and, on the chunks that carry
 * them, the finish reason, the usage (usually only on the last chunk) and
 * the model. Missing or `null` fields carry nothing. The last finish reason,
 * usage and model seen win.
 *
 * @category models
 * @since 0.2.0
 */
export interface ProviderChunk {
  readonly text?: string | null | undefined
  readonly refusal?: string | null | undefined
  readonly toolCalls?: ReadonlyArray<ToolCallFragment> | null | undefined
  readonly finishReason?: string | null | undefined
  readonly usage?: ProviderResponse["usage"]
  readonly model?: string | null | undefined
}

/**
 * A streaming provider: makes one model call and yields its chunks, as an
 * Effect `Stream` or any async iterable. It must pass `call.signal` on to its
 * HTTP request (aborted when the stream is interrupted or no longer pulled).
 * An `ActionError` it fails with passes through; any other failure becomes
 * EXECUTION. The stream must say a finish reason before it ends: one that
 * ends without is taken as cut off (TRANSIENT).
 *
 * @category models
 * @since 0.2.0
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
 * @since 0.2.0
 */
export interface Providers {
  readonly generate?: Provider | undefined
  readonly stream?: StreamProvider | undefined
}

/**
 * Options of {@link make}.
 *
 * - `name`: the provider's name, for the span (`gen_ai.system`); default
 *   `"unknown"`.
 * - `model`: the default model name, used when a request names none.
 * - `secrets`: secrets the provider holds (its API key): every error is
 *   scrubbed of them (their text, base64 and URL-encoded forms) before it
 *   leaves, so they never reach errors, spans or logs.
 *
 * @category models
 * @since 0.1.0
 */
export interface MakeOptions {
  readonly name?: string | undefined
  readonly model?: string | undefined
  readonly secrets?: ReadonlyArray<Redacted.Redacted<string>> | undefined
}

const defaultAction = "LanguageModel"

const count = (value: number | null | undefined): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0

const finishReasons: ReadonlySet<string> = new Set(["stop", "length", "tool_calls", "content_filter"])

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const kindOf = (u: unknown): string =>
  u === null ? "null" : Array.isArray(u) ? "a list" : typeof u === "object" ? "an object" : `a ${typeof u}`

/** The reply's text: a string, nothing (null or absent: ""), or a list of text parts (joined). */
const textOf = (content: unknown): string => {
  if (typeof content === "string") return content
  if (content === undefined || content === null) return ""
  if (Array.isArray(content) && content.every((part) => isRecord(part) && typeof part.text === "string")) {
    return content.map((part) => (part as { readonly text: string }).text).join("")
  }
  return `\u0000${kindOf(content)}`
}

/** The tool calls of a reply, each with an id of its own, or what makes them unreadable. */
const toolCallsOf = (raw: unknown): ReadonlyArray<ToolCall> | string => {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) return `its tool_calls is ${kindOf(raw)}, not a list`
  const calls: Array<ToolCall> = []
  for (let index = 0; index < raw.length; index++) {
    const entry: unknown = raw[index]
    if (!isRecord(entry)) return `its tool_calls[${index}] is ${kindOf(entry)}, not a tool call`
    // An id that is not a string is "": a chat turn gives empty and repeated ids fresh ones.
    const id = typeof entry.id === "string" ? entry.id : ""
    const args = entry.arguments
    calls.push({
      id,
      // No usable name: the call is kept under "" and the chat answers it NOT_FOUND.
      name: typeof entry.name === "string" ? entry.name : "",
      arguments: typeof args === "string" ? args : args === undefined || args === null ? "" : JSON.stringify(args)
    })
  }
  return calls
}

const normalise = (action: string, raw: ProviderResponse): Response | ExecutionFailure => {
  const malformed = (what: string) =>
    new ExecutionFailure({ action, message: `${action}: the model's reply is malformed: ${what}` })
  if (!isRecord(raw)) return malformed(`it is ${kindOf(raw)}, not a reply`)
  const text = textOf(raw.text)
  if (text.startsWith("\u0000")) return malformed(`its content is ${text.slice(1)}, not text`)
  const toolCalls = toolCallsOf(raw.toolCalls)
  if (typeof toolCalls === "string") return malformed(toolCalls)
  const usage = isRecord(raw.usage) ? raw.usage : undefined
  const inputTokens = count(usage?.inputTokens as number | undefined)
  const outputTokens = count(usage?.outputTokens as number | undefined)
  const total = usage?.totalTokens
  const reason: unknown = raw.finishReason
  const finishReason: FinishReason =
    typeof reason !== "string" || reason === ""
      ? toolCalls.length > 0
        ? "tool_calls"
        : "stop"
      : finishReasons.has(reason)
        ? (reason as FinishReason)
        : "other"
  return {
    text,
    toolCalls,
    usage: {
      inputTokens,
      outputTokens,
      totalTokens: typeof total === "number" ? count(total) : inputTokens + outputTokens
    },
    finishReason,
    ...(typeof raw.model === "string" ? { model: raw.model } : {}),
    ...(typeof raw.refusal === "string" && raw.refusal.length > 0 ? { refusal: raw.refusal } : {})
  }
}

// =============================================================================
// Joining a streamed answer
// =============================================================================

interface Slot {
  id: string | undefined
  name: string | undefined
  arguments: string
  started: boolean
}

const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

const optionalString = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string"

/**
 * Joins the chunks of one streamed answer: text and refusal pieces in order,
 * tool-call fragments by index (id and name from whichever fragment carries
 * them), the last finish reason, usage and model seen. `push` turns a chunk
 * into the parts it adds; `finish` checks the answer is whole and gives the
 * last parts and the `Finished` response.
 */
const joiner = (action: string) => {
  let text = ""
  let refusal = ""
  let finishReason: string | undefined
  let usage: ProviderResponse["usage"]
  let model: string | undefined
  let chunks = 0
  const slots = new Map<number, Slot>()
  const malformed = (field: string, detail: string) =>
    new ExecutionFailure({
      action,
      message: `${action}: the model stream sent a malformed chunk (chunk ${chunks}): ${field} ${detail}`
    })

  const started = (index: number, slot: Slot, parts: Array<StreamPart>) => {
    slot.started = true
    const id = slot.id ?? ""
    parts.push({ _tag: "ToolCallStarted", index, id, name: slot.name as string })
    if (slot.arguments !== "") parts.push({ _tag: "ToolCallArgumentsDelta", index, id, delta: slot.arguments })
  }

  /** The parts a chunk adds to `parts`, or the failure of a malformed chunk. */
  const push = (chunk: ProviderChunk, parts: Array<StreamPart>): ExecutionFailure | undefined => {
    chunks += 1
    if (typeof chunk !== "object" || chunk === null) return malformed("the chunk", "is not an object")
    for (const field of ["text", "refusal", "finishReason", "model"] as const) {
      if (!optionalString(chunk[field])) return malformed(field, "is not a string")
    }
    const fragments = chunk.toolCalls ?? []
    if (!Array.isArray(fragments)) return malformed("toolCalls", "is not an array")
    if (typeof chunk.text === "string" && chunk.text !== "") {
      text += chunk.text
      parts.push({ _tag: "TextDelta", delta: chunk.text })
    }
    if (typeof chunk.refusal === "string") refusal += chunk.refusal
    for (let i = 0; i < fragments.length; i++) {
      const fragment: ToolCallFragment = fragments[i]
      const field = `toolCalls[${i}]`
      if (typeof fragment !== "object" || fragment === null) return malformed(field, "is not an object")
      if (!isIndex(fragment.index)) return malformed(`${field}.index`, "is not an integer >= 0")
      for (const key of ["id", "name", "arguments"] as const) {
        if (!optionalString(fragment[key])) return malformed(`${field}.${key}`, "is not a string")
      }
      let slot = slots.get(fragment.index)
      if (slot === undefined) {
        slot = { id: undefined, name: undefined, arguments: "", started: false }
        slots.set(fragment.index, slot)
      }
      if (typeof fragment.id === "string" && fragment.id !== "" && slot.id === undefined) slot.id = fragment.id
      if (typeof fragment.name === "string" && fragment.name !== "" && slot.name === undefined) {
        slot.name = fragment.name
      }
      const piece = fragment.arguments ?? ""
      slot.arguments += piece
      if (slot.started) {
        if (piece !== "") {
          parts.push({ _tag: "ToolCallArgumentsDelta", index: fragment.index, id: slot.id ?? "", delta: piece })
        }
      } else if (slot.id !== undefined && slot.name !== undefined) {
        started(fragment.index, slot, parts)
      }
    }
    if (typeof chunk.finishReason === "string" && chunk.finishReason !== "") finishReason = chunk.finishReason
    if (typeof chunk.model === "string") model = chunk.model
    if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage
    return undefined
  }

  /** The parts a batch of chunks adds (one list, so a batch costs one effect). */
  const pushAll = (
    batch: ReadonlyArray<ProviderChunk>
  ): Effect.Effect<readonly [ReadonlyArray<StreamPart>], ExecutionFailure> => {
    const parts: Array<StreamPart> = []
    for (const chunk of batch) {
      const failure = push(chunk, parts)
      if (failure !== undefined) return Effect.fail(failure)
    }
    return Effect.succeed([parts])
  }

  const finish = (): Effect.Effect<ReadonlyArray<StreamPart>, ActionError> => {
    if (finishReason === undefined) {
      return Effect.fail(
        new TransientFailure({
          action,
          message: `${action}: the model stream ended before the answer was finished (after ${chunks} chunks)`
        })
      )
    }
    const parts: Array<StreamPart> = []
    const indexes = [...slots.keys()].sort((a, b) => a - b)
    const toolCalls: Array<ToolCall> = []
    for (const index of indexes) {
      const slot = slots.get(index) as Slot
      if (slot.name === undefined) {
        return Effect.fail(
          new ExecutionFailure({
            action,
            message: `${action}: the model stream never completed the tool call at index ${index}: it has no name`
          })
        )
      }
      if (!slot.started) started(index, slot, parts)
      toolCalls.push({ id: slot.id ?? "", name: slot.name, arguments: slot.arguments })
    }
    const response = normalise(action, { text, toolCalls, finishReason, usage, model, refusal })
    if (response instanceof ExecutionFailure) return Effect.fail(response)
    parts.push({ _tag: "Finished", response })
    return Effect.succeed(parts)
  }

  return { pushAll, finish }
}

/**
 * The parts a whole answer streams as when it was not streamed: one text
 * delta (none for `""`), each tool call started with all its arguments (as
 * one delta, none for `""`), then `Finished`.
 *
 * @category combinators
 * @since 0.2.0
 */
export const partsOf = (response: Response): ReadonlyArray<StreamPart> => {
  const parts: Array<StreamPart> = []
  if (response.text !== "") parts.push({ _tag: "TextDelta", delta: response.text })
  response.toolCalls.forEach((call, index) => {
    parts.push({ _tag: "ToolCallStarted", index, id: call.id, name: call.name })
    if (call.arguments !== "") parts.push({ _tag: "ToolCallArgumentsDelta", index, id: call.id, delta: call.arguments })
  })
  parts.push({ _tag: "Finished", response })
  return parts
}

/** The parts of a stream of chunks; failures other than an `ActionError` become EXECUTION. */
const joined = <R>(
  action: string,
  chunks: Stream.Stream<ProviderChunk, unknown, R>,
  onEnd?: () => void
): Stream.Stream<StreamPart, ActionError, R> => {
  const join = joiner(action)
  return chunks.pipe(
    Stream.mapArrayEffect(join.pushAll),
    Stream.concat(
      Stream.fromEffect(
        Effect.suspend(() => {
          onEnd?.()
          return join.finish()
        })
      )
    ),
    Stream.flattenIterable,
    Stream.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Stream.failCause(cause as Cause.Cause<never>)
        : Stream.fail(streamFailure(action, Cause.squash(cause)))
    )
  )
}

/**
 * The response a list of streamed chunks adds up to, joined as a streaming
 * provider's are (see {@link ProviderChunk}); fails as such a stream would
 * (no finish reason: TRANSIENT; a malformed chunk or a tool call without a
 * name: EXECUTION). `action` names the errors (default `"LanguageModel"`).
 *
 * @category constructors
 * @since 0.2.0
 */
export const fromChunks = (
  chunks: Iterable<ProviderChunk>,
  action: string = defaultAction
): Effect.Effect<Response, ActionError> => collect(joined(action, Stream.fromIterable(chunks)))

const streamFailure = (action: string, failure: unknown): ActionError =>
  isActionError(failure)
    ? failure
    : new ExecutionFailure({
        action,
        message: `${action}: model stream failed: ${failure instanceof Error ? failure.message : String(failure)}`,
        cause: failure
      })

/**
 * The response of a streamed answer: its `Finished` part.
 *
 * @category combinators
 * @since 0.2.0
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
 *   `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`; on failure
 *   `error.type` (the category); message contents are never attributes;
 * - records `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`
 *   (see `Metrics`);
 * - passes the provider a signal aborted on interruption (an attempt timeout
 *   interrupts, so the HTTP request is aborted; the provider must honour it);
 * - maps failures: an `ActionError` passes through; anything else is
 *   `ExecutionFailure` ("model call failed: …"); every error is scrubbed of
 *   `options.secrets`;
 * - normalises the answer (see {@link ProviderResponse}) and records its
 *   usage into the current {@link UsageMeter}, if any.
 *
 * Each `stream` call does the same in a `chat {model}` span (without the
 * metrics), joins
 * the provider's chunks (see {@link ProviderChunk}: fragments by index, ids
 * and names from whichever fragment carries them, the last usage seen) and
 * aborts the provider's request when the stream is interrupted or no longer
 * pulled. A malformed chunk is EXECUTION naming the field.
 *
 * It does not retry and sets no timeout of its own: the calling action's
 * resilience policy does both.
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
  const providers: Providers = typeof provider === "function" ? { generate: provider } : provider
  const secrets = options?.secrets ?? []
  const system = options?.name ?? "unknown"
  const callOf = (request: Request, signal: AbortSignal): ProviderCall => ({
    request,
    model: request.model ?? options?.model,
    action: request.action ?? defaultAction,
    signal
  })

  const generated = (request: Request): Effect.Effect<Response, ActionError> => {
    const generate = providers.generate
    if (generate !== undefined) {
      const action = request.action ?? defaultAction
      return Effect.flatMap(
        Callback.fromReturned<ProviderResponse>(action, "model call", (signal) => generate(callOf(request, signal))),
        (raw) => {
          const response = normalise(action, raw)
          return response instanceof ExecutionFailure ? Effect.fail(response) : Effect.succeed(response)
        }
      )
    }
    return collect(streamed(request))
  }

  const streamed = (request: Request): Stream.Stream<StreamPart, ActionError> => {
    const stream = providers.stream
    if (stream === undefined) {
      return Stream.flatMap(Stream.fromEffect(generated(request)), (response) => Stream.fromArray(partsOf(response)))
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
          try: () => stream(callOf(request, controller.signal)),
          catch: (thrown) => streamFailure(action, thrown)
        })
        return joined(
          action,
          Stream.isStream(source) ? source : Stream.fromAsyncIterable(source, (error) => error),
          () => {
            ended = true
          }
        )
      })
    )
  }

  const record = (response: Response) =>
    Effect.flatMap(Effect.serviceOption(UsageMeter), (meter) =>
      Option.isSome(meter) ? meter.value.record(response.usage) : Effect.void
    )

  const callSpan = (request: Request) => {
    const model = request.model ?? options?.model
    return {
      call: { provider: system, model, action: request.action ?? defaultAction, temperature: request.temperature },
      answer: (response: Response) => ({
        model: response.model ?? model,
        finishReason: response.finishReason,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens
      })
    }
  }

  const generate = (request: Request): Effect.Effect<Response, ActionError> => {
    const { call, answer } = callSpan(request)
    return generated(request).pipe(
      Effect.tap(record),
      Effect.mapError((error) => Redact.scrub(error, secrets)),
      Telemetry.chat(call, answer)
    )
  }

  const stream = (request: Request): Stream.Stream<StreamPart, ActionError> => {
    const { call, answer } = callSpan(request)
    // The same `chat {model}` span as `generate`'s, annotated with the answer when it finishes.
    return streamed(request).pipe(
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
              "gen_ai.usage.output_tokens": answered.outputTokens
            }),
            record(last.response)
          ),
          parts
        )
      }),
      Stream.mapError((error) => Redact.scrub(error, secrets)),
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

  return LanguageModel.of({ generate, stream })
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
 * @category wire format
 * @since 0.1.0
 */
export const httpFailure = (options: {
  readonly action: string
  readonly status: number
  readonly message: string
  readonly retryAfter?: Duration.Duration | undefined
}): TransientFailure | ExecutionFailure => {
  const { action, status } = options
  const excerpt = shorten(options.message, 200)
  if (HttpResponse.isTransientStatus(status)) {
    return new TransientFailure({
      action,
      status,
      message: `${action}: the model API answered HTTP ${status}${
        options.retryAfter === undefined ? "" : ` (retry after ${Duration.format(options.retryAfter)})`
      }: ${excerpt}`,
      ...(options.retryAfter === undefined ? {} : { retryAfter: options.retryAfter })
    })
  }
  return new ExecutionFailure({
    action,
    status,
    excerpt,
    message: `${action}: the model API refused the request (HTTP ${status}): ${excerpt}`
  })
}

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
) => Duration.Duration | undefined = HttpResponse.retryAfter
