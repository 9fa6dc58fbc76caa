/**
 * A real, local OpenAI-compatible endpoint for tests and examples: a
 * `node:http` server on 127.0.0.1 (an ephemeral port) answering
 * `POST /v1/chat/completions` from a script — replies, tool calls, HTTP
 * errors with their headers (429 with `retry-after`), delays and malformed
 * bodies — and recording every request's headers and body, and whether the
 * client hung up before the answer (an aborted request). A request with
 * `stream: true` is answered with server-sent events the way the OpenAI API
 * streams (see {@link make}), and a script can also send chunks of its own,
 * stall a stream or cut it off. The `openai` SDK (or any HTTP client) talks
 * to it through {@link ChatCompletionsServer.baseURL}.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { OpenAiLanguageModel } from "@rolecraft/openai"
 * import { ChatCompletionsServer } from "@rolecraft/testing"
 * import { Effect, Redacted, Schema } from "effect"
 *
 * const Writer = Role.make({
 *   identity: { name: "writer", goal: "Write", domain: "text" },
 *   actions: { tip: Action.llm({ description: "A packing tip", parameters: { destination: Schema.String } }) }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* ChatCompletionsServer.make([ChatCompletionsServer.reply("Pack layers.")])
 *   const model = OpenAiLanguageModel.layer({ model: "gpt-4.1-mini", apiKey: Redacted.make("sk-test"), baseURL: server.baseURL })
 *   const agent = yield* Agent.make({ id: "test", roles: [Writer] })
 *   const tip = yield* agent.executeAction("tip", { destination: "Oslo" }).pipe(Effect.provide(model)) // "Pack layers."
 *   const [request] = yield* server.requests // what the openai SDK sent
 *   return request?.headers.authorization // "Bearer sk-test"
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import type * as Http from "node:http"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Completion from "./internal/completion.ts"
import * as EventStream from "./internal/eventStream.ts"
import type { ScriptedToolCall } from "./internal/scriptedToolCall.ts"
import * as Timers from "./internal/timers.ts"
import * as LocalHttpServer from "./LocalHttpServer.ts"

/**
 * Token usage as the API reports it, with its details (cached input,
 * reasoning); sent as given.
 *
 * @category models
 * @since 0.1.0
 */
export interface WireUsage {
  readonly prompt_tokens?: number | undefined
  readonly completion_tokens?: number | undefined
  readonly total_tokens?: number | undefined
  readonly prompt_tokens_details?: { readonly cached_tokens?: number | undefined } | undefined
  readonly completion_tokens_details?: { readonly reasoning_tokens?: number | undefined } | undefined
}

export type { ScriptedToolCall } from "./internal/scriptedToolCall.ts"

/**
 * One scripted answer (build with {@link reply}, {@link toolCalls},
 * {@link error}, {@link raw}, {@link delayed}, {@link respond}).
 *
 * @category models
 * @since 0.1.0
 */
export type Step =
  | {
      readonly _tag: "Reply"
      readonly text: string | null
      readonly usage?: WireUsage | undefined
      readonly finishReason?: string | undefined
      readonly model?: string | undefined
      readonly refusal?: string | undefined
    }
  | {
      readonly _tag: "ToolCalls"
      readonly calls: ReadonlyArray<ScriptedToolCall>
      readonly text?: string | null | undefined
      readonly usage?: WireUsage | undefined
      readonly finishReason?: string | undefined
    }
  | {
      readonly _tag: "Error"
      readonly status: number
      readonly message: string
      readonly headers?: Readonly<Record<string, string>> | undefined
    }
  | {
      readonly _tag: "Raw"
      readonly status: number
      readonly body: string
      readonly headers?: Readonly<Record<string, string>> | undefined
    }
  | { readonly _tag: "Delayed"; readonly delay: Duration.Input; readonly step: Step }
  | { readonly _tag: "Respond"; readonly respond: (request: Recorded) => Step }
  | { readonly _tag: "Chunks"; readonly chunks: ReadonlyArray<unknown>; readonly ending: EventStream.Ending }
  | { readonly _tag: "BreakOff"; readonly step: Step; readonly after: number; readonly ending: "stall" | "cut" }

export type { Ending } from "./internal/eventStream.ts"

/**
 * A chat completion with text (`null` for no content); finish reason
 * `"stop"` unless given; `usage` sent only when given.
 *
 * @category constructors
 * @since 0.1.0
 */
export const reply = (
  text: string | null,
  options?: {
    readonly usage?: WireUsage | undefined
    readonly finishReason?: string | undefined
    readonly model?: string | undefined
    readonly refusal?: string | undefined
  }
): Step => ({ _tag: "Reply", text, ...options })

/**
 * A chat completion calling tools (finish reason `"tool_calls"` unless
 * `finishReason` is given, e.g. `"length"` for a reply cut off at its token
 * limit; content `null` unless `text` is given).
 *
 * @category constructors
 * @since 0.1.0
 */
export const toolCalls = (
  calls: ReadonlyArray<ScriptedToolCall>,
  options?: {
    readonly text?: string | null | undefined
    readonly usage?: WireUsage | undefined
    readonly finishReason?: string | undefined
  }
): Step => ({ _tag: "ToolCalls", calls, ...options })

/**
 * An HTTP error with an OpenAI-style body `{"error":{"message",…}}` and
 * optional headers (e.g. `{ "retry-after": "1" }`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const error = (
  status: number,
  options?: { readonly message?: string | undefined; readonly headers?: Readonly<Record<string, string>> | undefined }
): Step => ({
  _tag: "Error",
  status,
  message: options?.message ?? `scripted HTTP ${status}`,
  ...(options?.headers === undefined ? {} : { headers: options.headers })
})

/**
 * A raw body sent as is (default status 200, content type
 * `application/json`), e.g. malformed JSON or a body without `choices`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const raw = (
  body: string,
  options?: { readonly status?: number | undefined; readonly headers?: Readonly<Record<string, string>> | undefined }
): Step => ({
  _tag: "Raw",
  body,
  status: options?.status ?? 200,
  ...(options?.headers === undefined ? {} : { headers: options.headers })
})

/**
 * A step answered after `delay` of real time (the request may be aborted
 * meanwhile; it is then recorded as `"aborted"` and nothing is sent).
 *
 * @category constructors
 * @since 0.1.0
 */
export const delayed = (delay: Duration.Input, step: Step): Step => ({ _tag: "Delayed", delay, step })

/**
 * A step computed from the recorded request.
 *
 * @category constructors
 * @since 0.1.0
 */
export const respond = (f: (request: Recorded) => Step): Step => ({ _tag: "Respond", respond: f })

/**
 * A stream of chunks sent exactly as given, each as one `data:` event (an
 * object as its JSON, a string as is — e.g. malformed JSON), then ended as
 * `options.ending` says (default `"done"`). Answered as a stream even when
 * the request did not ask for one.
 *
 * @category constructors
 * @since 0.1.0
 */
export const chunks = (
  list: ReadonlyArray<unknown>,
  options?: { readonly ending?: EventStream.Ending | undefined }
): Step => ({
  _tag: "Chunks",
  chunks: list,
  ending: options?.ending ?? "done"
})

/**
 * `step` streamed, but only its first `after` chunks; then the stream stalls
 * (nothing more is sent, the connection stays open until the client closes
 * it).
 *
 * @category constructors
 * @since 0.1.0
 */
export const stall = (step: Step, options: { readonly after: number }): Step => ({
  _tag: "BreakOff",
  step,
  after: options.after,
  ending: "stall"
})

/**
 * `step` streamed, but only its first `after` chunks; then the socket is
 * closed mid-stream (no finish reason, no usage, no `[DONE]`).
 *
 * @category constructors
 * @since 0.1.0
 */
export const cut = (step: Step, options: { readonly after: number }): Step => ({
  _tag: "BreakOff",
  step,
  after: options.after,
  ending: "cut"
})

/**
 * A request the server received: method, path (with query), headers (lower
 * case), body (parsed JSON, or the raw text when it is not JSON), and its
 * outcome: `"answered"`, `"aborted"` (the client closed the connection before
 * the answer was sent), `"cut"` (the script closed the socket mid-stream) or
 * `"pending"`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly outcome: "pending" | "answered" | "aborted" | "cut"
}

/**
 * A running server.
 *
 * - `baseURL`: `http://127.0.0.1:<port>/v1`, for the SDK's `baseURL`.
 * - `requests`: every request so far, in arrival order.
 * - `remaining`: scripted steps not used yet.
 *
 * A request to another path gets 404; a chat completion request past the end
 * of the script gets 500 with "script exhausted" (and is recorded).
 *
 * @category models
 * @since 0.1.0
 */
export interface ChatCompletionsServer {
  readonly baseURL: string
  readonly requests: Effect.Effect<ReadonlyArray<Recorded>>
  readonly remaining: Effect.Effect<number>
}

const isRecordLike = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null

const wantsStream = (body: unknown): boolean => isRecordLike(body) && body.stream === true

const wantsUsage = (body: unknown): boolean =>
  isRecordLike(body) && isRecordLike(body.stream_options) && body.stream_options.include_usage === true

const parseBody = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const headersOf = (request: Http.IncomingMessage): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

const modelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && "model" in body && typeof body.model === "string"
    ? body.model
    : "scripted-model"

/**
 * Options of {@link make}.
 *
 * - `chunkDelay`: the real time between two chunks of a stream; default none
 *   (all chunks are written at once). Lets a page or a terminal show text
 *   arriving.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly chunkDelay?: Duration.Input | undefined
}

/**
 * Starts a server for the life of the scope (closed, with its connections,
 * when the scope closes).
 *
 * A request with `stream: true` gets a {@link reply} or {@link toolCalls}
 * step as server-sent events, the way the OpenAI API streams: a first chunk
 * with the role, the text one word per chunk, each tool call's `id`, `type`
 * and `function.name` only on its first fragment (the first fragments of all
 * calls share one chunk), its arguments in up to three more fragments
 * carrying only `index` and the piece, a chunk with the finish reason, then —
 * when the request asked for `stream_options.include_usage` and the step has
 * usage — a last chunk with `choices: []` and the usage, and `data: [DONE]`.
 * {@link chunks}, {@link stall} and {@link cut} script other streams.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatCompletionsServer } from "@rolecraft/testing"
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* ChatCompletionsServer.make([
 *     ChatCompletionsServer.error(429, { headers: { "retry-after": "1" } }),
 *     ChatCompletionsServer.reply("Pack layers.", { usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })
 *   ])
 *   // new OpenAI({ baseURL: server.baseURL, ... }) or OpenAiLanguageModel.layer({ baseURL: server.baseURL, ... })
 * }).pipe(Effect.scoped)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  script: ReadonlyArray<Step>,
  options?: Options
): Effect.Effect<ChatCompletionsServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const server: Server = {
      steps: [...script],
      records: [],
      timers: Timers.make(),
      cutOff: new WeakSet<Http.ServerResponse>(),
      chunkDelay:
        options?.chunkDelay === undefined ? 0 : Duration.toMillis(Duration.fromInputUnsafe(options.chunkDelay)),
      next: 0,
      toolCallIds: 0,
      completions: 0
    }
    const { url } = yield* LocalHttpServer.serve((request, response) => handle(server, request, response))
    // Runs before the server closes (finalizers run last-added first): no scripted delay outlives it.
    yield* Effect.addFinalizer(() => Effect.sync(server.timers.clear))
    return {
      baseURL: `${url}/v1`,
      requests: Effect.sync(() => [...server.records]),
      remaining: Effect.sync(() => Math.max(0, server.steps.length - server.next))
    }
  })

/** A running server's script, what it recorded, and its counters (the next step, tool-call ids, completions). */
interface Server {
  readonly steps: ReadonlyArray<Step>
  readonly records: Array<Recorded>
  readonly timers: Timers.Timers
  readonly cutOff: WeakSet<Http.ServerResponse>
  readonly chunkDelay: number
  next: number
  toolCallIds: number
  completions: number
}

/** Records a request, then answers it with the script's next step (404 off the route, 500 past the script). */
const handle = (server: Server, request: Http.IncomingMessage, response: Http.ServerResponse): void => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const { records, steps } = server
    const position =
      records.push({
        method: request.method ?? "",
        path: request.url ?? "",
        headers: headersOf(request),
        body: parseBody(Buffer.concat(chunks).toString("utf8")),
        outcome: "pending"
      }) - 1
    const setOutcome = (outcome: Recorded["outcome"]) => {
      const current = records[position]
      if (current !== undefined && current.outcome === "pending") records[position] = { ...current, outcome }
    }
    response.on("close", () =>
      setOutcome(server.cutOff.has(response) ? "cut" : response.writableFinished ? "answered" : "aborted")
    )
    const record = records[position] as Recorded
    const path = (request.url ?? "").split("?")[0]
    if (request.method !== "POST" || path !== "/v1/chat/completions") {
      EventStream.send(response, 404, JSON.stringify({ error: { message: `no route for ${request.method} ${path}` } }))
      return
    }
    const step = steps[server.next]
    server.next += 1
    if (step === undefined) {
      EventStream.send(
        response,
        500,
        JSON.stringify({
          error: {
            message: `ChatCompletionsServer: script exhausted (request ${server.next}, scripted ${steps.length})`
          }
        })
      )
      return
    }
    answer(server, step, record, response)
  })
}

/** The completion a reply or tool-call step answers with (taking its tool-call ids). */
const completionOf = (
  server: Server,
  step: Step & { readonly _tag: "Reply" | "ToolCalls" },
  record: Recorded
): Completion.Completion => {
  const calls = step._tag === "ToolCalls" ? Completion.toolCallsOf(step.calls, server.toolCallIds + 1) : undefined
  if (step._tag === "ToolCalls") server.toolCallIds += step.calls.length
  server.completions += 1
  return {
    id: `chatcmpl-${server.completions}`,
    model: (step._tag === "Reply" ? step.model : undefined) ?? modelOf(record.body),
    text: step.text ?? null,
    refusal: step._tag === "Reply" ? (step.refusal ?? null) : null,
    calls,
    finishReason: step.finishReason ?? (step._tag === "Reply" ? "stop" : "tool_calls"),
    usage: step.usage
  }
}

/** The chunks a reply or tool-call step streams as. */
const chunksOf = (server: Server, step: Step & { readonly _tag: "Reply" | "ToolCalls" }, record: Recorded) =>
  Completion.chunksOf(completionOf(server, step, record), wantsUsage(record.body))

/** Answers a request with one step (nothing when the client has gone). */
const answer = (server: Server, step: Step, record: Recorded, response: Http.ServerResponse): void => {
  if (response.destroyed) return
  const stream = (list: ReadonlyArray<unknown>, ending: EventStream.Ending) =>
    EventStream.stream(response, list, ending, server)
  switch (step._tag) {
    case "Reply":
    case "ToolCalls": {
      if (wantsStream(record.body)) stream(chunksOf(server, step, record), "done")
      else EventStream.send(response, 200, Completion.body(completionOf(server, step, record)))
      return
    }
    case "Chunks":
      stream(step.chunks, step.ending)
      return
    case "BreakOff": {
      const inner = step.step
      const list =
        inner._tag === "Reply" || inner._tag === "ToolCalls"
          ? chunksOf(server, inner, record)
          : inner._tag === "Chunks"
            ? inner.chunks
            : []
      stream(list.slice(0, step.after), step.ending)
      return
    }
    case "Error":
      EventStream.send(
        response,
        step.status,
        JSON.stringify({ error: { message: step.message, type: "scripted_error", param: null, code: null } }),
        step.headers
      )
      return
    case "Raw":
      EventStream.send(response, step.status, step.body, step.headers)
      return
    case "Respond":
      answer(server, step.respond(record), record, response)
      return
    case "Delayed":
      server.timers.later(response, Duration.toMillis(Duration.fromInputUnsafe(step.delay)), () =>
        answer(server, step.step, record, response)
      )
      return
  }
}
