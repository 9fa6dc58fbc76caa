/**
 * A real, local OpenAI-compatible endpoint for tests and examples: a
 * `node:http` server on 127.0.0.1 (an ephemeral port) answering
 * `POST /v1/chat/completions` from a script — replies, tool calls, HTTP
 * errors with their headers (429 with `retry-after`), delays and malformed
 * bodies — and recording every request's headers and body, and whether the
 * client hung up before the answer (an aborted request). The `openai` SDK
 * (or any HTTP client) talks to it through {@link ChatCompletionsServer.baseURL}.
 *
 * @since 0.1.0
 */
import type * as Http from "node:http"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { render, type ScriptedToolCall } from "./internal/scriptedToolCall.ts"
import * as LocalHttpServer from "./LocalHttpServer.ts"

/**
 * Token usage as the API reports it; sent as given.
 *
 * @category models
 * @since 0.1.0
 */
export interface WireUsage {
  readonly prompt_tokens?: number | undefined
  readonly completion_tokens?: number | undefined
  readonly total_tokens?: number | undefined
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
 * A chat completion calling tools (finish reason `"tool_calls"`, content
 * `null` unless `text` is given).
 *
 * @category constructors
 * @since 0.1.0
 */
export const toolCalls = (
  calls: ReadonlyArray<ScriptedToolCall>,
  options?: { readonly text?: string | null | undefined; readonly usage?: WireUsage | undefined }
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
 * A request the server received: method, path (with query), headers (lower
 * case), body (parsed JSON, or the raw text when it is not JSON), and its
 * outcome: `"answered"`, `"aborted"` (the client closed the connection before
 * the answer was sent) or `"pending"`.
 *
 * @category models
 * @since 0.1.0
 */
export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  readonly outcome: "pending" | "answered" | "aborted"
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

const toolCallsJson = (calls: ReadonlyArray<ScriptedToolCall>, firstId: number) =>
  calls.map((call, i) => {
    const { id, name, arguments: args } = render(call, firstId + i)
    return { id, type: "function", function: { name, arguments: args } }
  })

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
 * Starts a server for the life of the scope (closed, with its connections,
 * when the scope closes).
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
export const make = (script: ReadonlyArray<Step>): Effect.Effect<ChatCompletionsServer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const steps = [...script]
    const records: Array<Recorded> = []
    const timers = new Set<NodeJS.Timeout>()
    let next = 0
    let toolCallIds = 0
    let completions = 0

    const send = (
      response: Http.ServerResponse,
      status: number,
      body: string,
      headers: Readonly<Record<string, string>> = {}
    ) => {
      response.writeHead(status, { "content-type": "application/json", ...headers })
      response.end(body)
    }

    const answer = (step: Step, record: Recorded, response: Http.ServerResponse): void => {
      if (response.destroyed) return
      switch (step._tag) {
        case "Reply":
        case "ToolCalls": {
          const calls = step._tag === "ToolCalls" ? toolCallsJson(step.calls, toolCallIds + 1) : undefined
          if (step._tag === "ToolCalls") toolCallIds += step.calls.length
          completions += 1
          const message = {
            role: "assistant",
            content: step.text ?? null,
            refusal: step._tag === "Reply" ? (step.refusal ?? null) : null,
            ...(calls === undefined ? {} : { tool_calls: calls })
          }
          const finishReason = step._tag === "Reply" ? (step.finishReason ?? "stop") : "tool_calls"
          send(
            response,
            200,
            JSON.stringify({
              id: `chatcmpl-${completions}`,
              object: "chat.completion",
              created: 0,
              model: (step._tag === "Reply" ? step.model : undefined) ?? modelOf(record.body),
              choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
              ...(step.usage === undefined ? {} : { usage: step.usage })
            })
          )
          return
        }
        case "Error":
          send(
            response,
            step.status,
            JSON.stringify({ error: { message: step.message, type: "scripted_error", param: null, code: null } }),
            step.headers
          )
          return
        case "Raw":
          send(response, step.status, step.body, step.headers)
          return
        case "Respond":
          answer(step.respond(record), record, response)
          return
        case "Delayed": {
          const timer = setTimeout(
            () => {
              timers.delete(timer)
              answer(step.step, record, response)
            },
            Duration.toMillis(Duration.fromInputUnsafe(step.delay))
          )
          timers.add(timer)
          response.on("close", () => {
            clearTimeout(timer)
            timers.delete(timer)
          })
          return
        }
      }
    }

    const handle = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
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
        response.on("close", () => setOutcome(response.writableFinished ? "answered" : "aborted"))
        const record = records[position] as Recorded
        const path = (request.url ?? "").split("?")[0]
        if (request.method !== "POST" || path !== "/v1/chat/completions") {
          send(response, 404, JSON.stringify({ error: { message: `no route for ${request.method} ${path}` } }))
          return
        }
        const step = steps[next]
        next += 1
        if (step === undefined) {
          send(
            response,
            500,
            JSON.stringify({
              error: { message: `ChatCompletionsServer: script exhausted (request ${next}, scripted ${steps.length})` }
            })
          )
          return
        }
        answer(step, record, response)
      })
    }

    const { url } = yield* LocalHttpServer.serve(handle)
    // Runs before the server closes (finalizers run last-added first): no scripted delay outlives it.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
      })
    )

    return {
      baseURL: `${url}/v1`,
      requests: Effect.sync(() => [...records]),
      remaining: Effect.sync(() => Math.max(0, steps.length - next))
    }
  })
