/**
 * A real, local Anthropic Messages API endpoint for tests and examples: a
 * `node:http` server on 127.0.0.1 (an ephemeral port) answering
 * `POST /v1/messages` from a script — replies with text, thinking and tool
 * calls, whole messages as recorded, event streams as recorded, HTTP errors
 * in the API's error shape with their headers (429 with `retry-after`, 529
 * `overloaded_error`), errors inside a 200 stream, delays, stalls and cuts —
 * and recording every request's headers and body, and whether the client hung
 * up before the answer. A request with `stream: true` is answered with the
 * events the API streams (see {@link make}). The `@anthropic-ai/sdk` client
 * talks to it through {@link MessagesServer.baseURL}.
 *
 * @example
 * ```ts
 * import { Agent, type Role } from "@rolecraft/core"
 * import { AnthropicLanguageModel } from "@rolecraft/anthropic"
 * import { MessagesServer } from "@rolecraft/testing"
 * import { Effect, Redacted } from "effect"
 *
 * declare const Guide: Role.Any
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* MessagesServer.make([MessagesServer.reply("Lisbon has trams.")])
 *   const model = AnthropicLanguageModel.layer({
 *     model: "claude-haiku-4-5",
 *     apiKey: Redacted.make("sk-ant-test"),
 *     baseURL: server.baseURL
 *   })
 *   const agent = yield* Agent.make({ id: "guide", roles: [Guide] })
 *   yield* agent.chat("Tell me one thing about Lisbon.").pipe(Effect.provide(model))
 *   const [request] = yield* server.requests // what the SDK sent
 *   return request?.headers.authorization // "Bearer sk-ant-test"
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.3.0
 */
import type * as Http from "node:http"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as EventStream from "./internal/eventStream.ts"
import * as MessageEvents from "./internal/messageEvents.ts"
import * as Timers from "./internal/timers.ts"
import * as LocalHttpServer from "./LocalHttpServer.ts"

/**
 * Token usage as the Messages API reports it; sent as given.
 *
 * @category models
 * @since 0.3.0
 */
export interface WireUsage {
  readonly input_tokens?: number | undefined
  readonly output_tokens?: number | undefined
  readonly cache_read_input_tokens?: number | undefined
  readonly cache_creation_input_tokens?: number | undefined
  readonly output_tokens_details?: { readonly thinking_tokens?: number | undefined } | undefined
}

/**
 * A thinking block of a scripted reply: its text and signature (a
 * `thinking` block), or the encrypted `data` of a `redacted_thinking` block.
 *
 * @category models
 * @since 0.3.0
 */
export type ScriptedThinking = { readonly thinking: string; readonly signature: string } | { readonly redacted: string }

/**
 * A tool call of a scripted reply: the tool's name and its input object;
 * `id` defaults to `toolu_<n>` (counting every call the server made).
 *
 * @category models
 * @since 0.3.0
 */
export interface ScriptedToolUse {
  readonly name: string
  readonly input: Readonly<Record<string, unknown>>
  readonly id?: string | undefined
}

/**
 * One scripted answer (build with {@link reply}, {@link toolUse},
 * {@link message}, {@link events}, {@link error}, {@link raw},
 * {@link delayed}, {@link respond}, {@link stall}, {@link cut}).
 *
 * @category models
 * @since 0.3.0
 */
export type Step =
  | {
      readonly _tag: "Message"
      readonly build: (server: Counters, request: Recorded) => Readonly<Record<string, unknown>>
    }
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<unknown> }
  | {
      readonly _tag: "Error"
      readonly status: number
      readonly type: string
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
  | { readonly _tag: "BreakOff"; readonly step: Step; readonly after: number; readonly ending: "stall" | "cut" }

/**
 * The server's counters a scripted message reads: messages answered so far
 * and tool calls made so far (for default ids).
 *
 * @category models
 * @since 0.3.0
 */
export interface Counters {
  messages: number
  toolUses: number
}

const modelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && "model" in body && typeof body.model === "string"
    ? body.model
    : "scripted-model"

const thinkingBlocks = (thinking: ReadonlyArray<ScriptedThinking> | undefined) =>
  (thinking ?? []).map((block) =>
    "redacted" in block
      ? { type: "redacted_thinking", data: block.redacted }
      : { type: "thinking", thinking: block.thinking, signature: block.signature }
  )

/**
 * Options of {@link reply} and {@link toolUse}: the usage (default
 * `{ input_tokens: 10, output_tokens: 5 }`), the stop reason (default
 * `end_turn` for a reply, `tool_use` for calls), its `stop_details` (a
 * refusal's explanation), the model (default the request's), and thinking
 * blocks before the text.
 *
 * @category models
 * @since 0.3.0
 */
export interface ReplyOptions {
  readonly usage?: WireUsage | undefined
  readonly stopReason?: string | undefined
  readonly stopDetails?: Readonly<Record<string, unknown>> | undefined
  readonly model?: string | undefined
  readonly thinking?: ReadonlyArray<ScriptedThinking> | undefined
}

const defaultUsage: WireUsage = { input_tokens: 10, output_tokens: 5 }

const messageOf = (
  counters: Counters,
  request: Recorded,
  content: ReadonlyArray<Readonly<Record<string, unknown>>>,
  stopReason: string,
  options: ReplyOptions | undefined
): Readonly<Record<string, unknown>> => {
  counters.messages += 1
  return {
    id: `msg_scripted_${counters.messages}`,
    type: "message",
    role: "assistant",
    model: options?.model ?? modelOf(request.body),
    content: [...thinkingBlocks(options?.thinking), ...content],
    stop_reason: options?.stopReason ?? stopReason,
    stop_sequence: null,
    ...(options?.stopDetails === undefined ? {} : { stop_details: options.stopDetails }),
    usage: options?.usage ?? defaultUsage
  }
}

/**
 * A message with text (none for `""`), after any thinking blocks.
 *
 * @category constructors
 * @since 0.3.0
 */
export const reply = (text: string, options?: ReplyOptions): Step => ({
  _tag: "Message",
  build: (counters, request) =>
    messageOf(counters, request, text === "" ? [] : [{ type: "text", text }], "end_turn", options)
})

/**
 * A message calling tools (in parallel when several), after any thinking
 * blocks and an optional `text`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const toolUse = (
  calls: ReadonlyArray<ScriptedToolUse>,
  options?: ReplyOptions & { readonly text?: string | undefined }
): Step => ({
  _tag: "Message",
  build: (counters, request) => {
    const blocks: Array<Readonly<Record<string, unknown>>> = []
    if (options?.text !== undefined && options.text !== "") blocks.push({ type: "text", text: options.text })
    for (const call of calls) {
      counters.toolUses += 1
      blocks.push({ type: "tool_use", id: call.id ?? `toolu_${counters.toolUses}`, name: call.name, input: call.input })
    }
    return messageOf(counters, request, blocks, "tool_use", options)
  }
})

/**
 * A whole message object sent as given (a recorded response): as JSON, or,
 * when the request asks for a stream, as the events the API would stream it
 * with.
 *
 * @category constructors
 * @since 0.3.0
 */
export const message = (body: Readonly<Record<string, unknown>>): Step => ({
  _tag: "Message",
  build: (counters) => {
    counters.messages += 1
    return body
  }
})

/**
 * A stream of events sent exactly as given (a recorded stream), each as a
 * server-sent event whose `event:` line is its `type` (a string is sent as
 * the data of a `message` event, as is), then the response ends. Answered as
 * a stream even when the request did not ask for one. An
 * `{ type: "error", error: { type, message } }` event is how the API reports
 * an error inside a 200 stream.
 *
 * @category constructors
 * @since 0.3.0
 */
export const events = (list: ReadonlyArray<unknown>): Step => ({ _tag: "Events", events: list })

/**
 * An HTTP error in the API's shape, `{"type":"error","error":{"type","message"}}`;
 * `type` defaults by status (`rate_limit_error` for 429, `overloaded_error`
 * for 529, `api_error` for other 5xx, `invalid_request_error` otherwise).
 *
 * @category constructors
 * @since 0.3.0
 */
export const error = (
  status: number,
  options?: {
    readonly type?: string | undefined
    readonly message?: string | undefined
    readonly headers?: Readonly<Record<string, string>> | undefined
  }
): Step => ({
  _tag: "Error",
  status,
  type:
    options?.type ??
    (status === 429
      ? "rate_limit_error"
      : status === 529
        ? "overloaded_error"
        : status >= 500
          ? "api_error"
          : status === 401
            ? "authentication_error"
            : status === 403
              ? "permission_error"
              : status === 404
                ? "not_found_error"
                : "invalid_request_error"),
  message: options?.message ?? `scripted HTTP ${status}`,
  ...(options?.headers === undefined ? {} : { headers: options.headers })
})

/**
 * A raw body sent as is (default status 200, content type `application/json`).
 *
 * @category constructors
 * @since 0.3.0
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
 * A step answered after `delay` of real time.
 *
 * @category constructors
 * @since 0.3.0
 */
export const delayed = (delay: Duration.Input, step: Step): Step => ({ _tag: "Delayed", delay, step })

/**
 * A step computed from the recorded request.
 *
 * @category constructors
 * @since 0.3.0
 */
export const respond = (f: (request: Recorded) => Step): Step => ({ _tag: "Respond", respond: f })

/**
 * `step` streamed, but only its first `after` events; then the stream stalls
 * (the connection stays open until the client closes it).
 *
 * @category constructors
 * @since 0.3.0
 */
export const stall = (step: Step, options: { readonly after: number }): Step => ({
  _tag: "BreakOff",
  step,
  after: options.after,
  ending: "stall"
})

/**
 * `step` streamed, but only its first `after` events; then the socket is
 * closed mid-stream.
 *
 * @category constructors
 * @since 0.3.0
 */
export const cut = (step: Step, options: { readonly after: number }): Step => ({
  _tag: "BreakOff",
  step,
  after: options.after,
  ending: "cut"
})

/**
 * A request the server received: method, path, headers (lower case), body
 * (parsed JSON, or the raw text), and its outcome (`"answered"`,
 * `"aborted"`, `"cut"` or `"pending"`).
 *
 * @category models
 * @since 0.3.0
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
 * - `baseURL`: `http://127.0.0.1:<port>`, for the SDK's `baseURL` (the SDK
 *   adds `/v1/messages`).
 * - `requests`: every request so far, in arrival order.
 * - `remaining`: scripted steps not used yet.
 *
 * A request to another path gets 404; a request past the end of the script
 * gets 500 with "script exhausted" (and is recorded).
 *
 * @category models
 * @since 0.3.0
 */
export interface MessagesServer {
  readonly baseURL: string
  readonly requests: Effect.Effect<ReadonlyArray<Recorded>>
  readonly remaining: Effect.Effect<number>
}

/**
 * Options of {@link make}. `chunkDelay`: the real time between two events of
 * a stream; default none.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  readonly chunkDelay?: Duration.Input | undefined
}

interface Server {
  readonly steps: ReadonlyArray<Step>
  readonly records: Array<Recorded>
  readonly timers: Timers.Timers
  readonly cutOff: WeakSet<Http.ServerResponse>
  readonly chunkDelay: number
  readonly counters: Counters
  next: number
}

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

const wantsStream = (body: unknown): boolean =>
  typeof body === "object" && body !== null && "stream" in body && body.stream === true

const errorBody = (type: string, message: string) => JSON.stringify({ type: "error", error: { type, message } })

/**
 * Starts a server for the life of the scope (closed, with its connections,
 * when the scope closes). A {@link reply}, {@link toolUse} or
 * {@link message} step is sent as JSON, or — when the request has
 * `stream: true` — as the API streams it: `message_start`, each block's
 * start, deltas (text and thinking a word at a time, a thinking block's
 * signature in one `signature_delta`, tool input in up to three
 * `input_json_delta` pieces) and stop, `message_delta` with the stop reason
 * and usage, `message_stop`, every event under its `event:` line.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { MessagesServer } from "@rolecraft/testing"
 *
 * const program = Effect.gen(function* () {
 *   const server = yield* MessagesServer.make([
 *     MessagesServer.error(529),
 *     MessagesServer.toolUse([{ name: "nights", input: { from: "2026-05-12", to: "2026-05-15" } }], {
 *       thinking: [{ thinking: "Count the nights.", signature: "sig-1" }]
 *     }),
 *     MessagesServer.reply("Three nights.")
 *   ])
 *   return server.baseURL // for AnthropicLanguageModel.layer({ baseURL }) or new Anthropic({ baseURL })
 * }).pipe(Effect.scoped)
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const make = (
  script: ReadonlyArray<Step>,
  options?: Options
): Effect.Effect<MessagesServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const server: Server = {
      steps: [...script],
      records: [],
      timers: Timers.make(),
      cutOff: new WeakSet<Http.ServerResponse>(),
      chunkDelay:
        options?.chunkDelay === undefined ? 0 : Duration.toMillis(Duration.fromInputUnsafe(options.chunkDelay)),
      counters: { messages: 0, toolUses: 0 },
      next: 0
    }
    const { url } = yield* LocalHttpServer.serve((request, response) => handle(server, request, response))
    yield* Effect.addFinalizer(() => Effect.sync(server.timers.clear))
    return {
      baseURL: url,
      requests: Effect.sync(() => [...server.records]),
      remaining: Effect.sync(() => Math.max(0, server.steps.length - server.next))
    }
  })

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
    response.on("close", () => {
      const current = records[position]
      if (current === undefined || current.outcome !== "pending") return
      records[position] = {
        ...current,
        outcome: server.cutOff.has(response) ? "cut" : response.writableFinished ? "answered" : "aborted"
      }
    })
    const record = records[position] as Recorded
    const path = (request.url ?? "").split("?")[0]
    if (request.method !== "POST" || path !== "/v1/messages") {
      EventStream.send(response, 404, errorBody("not_found_error", `no route for ${request.method} ${path}`))
      return
    }
    const step = steps[server.next]
    server.next += 1
    if (step === undefined) {
      EventStream.send(
        response,
        500,
        errorBody("api_error", `MessagesServer: script exhausted (request ${server.next}, scripted ${steps.length})`)
      )
      return
    }
    answer(server, step, record, response)
  })
}

/** The events a step streams as (none for a step that is not a message or events). */
const eventsOf = (server: Server, step: Step, record: Recorded): ReadonlyArray<unknown> =>
  step._tag === "Message"
    ? MessageEvents.eventsOf(step.build(server.counters, record))
    : step._tag === "Events"
      ? step.events
      : []

const answer = (server: Server, step: Step, record: Recorded, response: Http.ServerResponse): void => {
  if (response.destroyed) return
  const stream = (list: ReadonlyArray<unknown>, ending: MessageEvents.Ending) =>
    MessageEvents.stream(response, list, ending, server)
  switch (step._tag) {
    case "Message":
      if (wantsStream(record.body)) stream(eventsOf(server, step, record), "end")
      else EventStream.send(response, 200, JSON.stringify(step.build(server.counters, record)))
      return
    case "Events":
      stream(step.events, "end")
      return
    case "BreakOff":
      stream(eventsOf(server, step.step, record).slice(0, step.after), step.ending)
      return
    case "Error":
      EventStream.send(response, step.status, errorBody(step.type, step.message), {
        "request-id": `req_scripted_${server.next}`,
        ...step.headers
      })
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
