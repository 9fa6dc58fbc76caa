/**
 * The recorded provider traffic in test/fixtures/providers: each recording
 * with its expectation, and a local HTTP server on 127.0.0.1 that replays
 * them — a stream (`*.chunks.txt`, one chunk's JSON a line) as server-sent
 * events, one `data:` event a line then `data: [DONE]`; a whole response or
 * an error body (`*.json`) byte for byte with its status.
 */
import { readdirSync, readFileSync } from "node:fs"
import type * as http from "node:http"
import { join } from "node:path"
import type { Effect, Scope } from "effect"
import * as LocalServer from "../../packages/core/test/support/LocalServer.ts"

const root = join(import.meta.dirname, "../fixtures/providers")

/** What a recording contains, as its expectation file says (only the fields the tests read). */
export interface Expectation {
  readonly recording: string
  readonly provider: string
  readonly kind: "stream" | "json" | "error"
  readonly text: string
  readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: string }>
  readonly usage: {
    readonly promptTokens: number | null
    readonly completionTokens: number | null
    readonly totalTokens: number | null
    readonly reasoningTokens?: number | null | undefined
    readonly cachedTokens?: number | null | undefined
  } | null
  readonly finishReason: string | null
  readonly refusal: string | null
  readonly reasoning: string | null
  readonly reasoningSources: ReadonlyArray<string>
  readonly annotations: ReadonlyArray<Readonly<Record<string, unknown>>> | null
  readonly citations: ReadonlyArray<string> | null
  readonly error: ReadonlyArray<{ readonly message: string }> | null
  readonly statusFromElsewhere?: { readonly status: number | null } | undefined
}

/** One recording: its name (`<provider>/<file>`), bytes and expectation. */
export interface Recording {
  readonly name: string
  readonly body: Buffer
  readonly expected: Expectation
}

/** Every recording of the corpus, in name order. */
export const recordings: ReadonlyArray<Recording> = readdirSync(join(root, "expected"))
  .flatMap((provider) =>
    readdirSync(join(root, "expected", provider)).map((file) => {
      const expected = JSON.parse(readFileSync(join(root, "expected", provider, file), "utf8")) as Expectation
      return { name: `${provider}/${file.replace(/\.expected\.json$/, "")}`, expected }
    })
  )
  .sort((a, b) => a.name.localeCompare(b.name))
  .map(({ name, expected }) => ({ name, expected, body: readFileSync(join(root, expected.recording)) }))

/** How one request is answered. */
export type Answer = (response: http.ServerResponse) => void

/** A recorded stream as server-sent events: each non-empty line one `data:` event, then `[DONE]`. */
export const sse =
  (chunks: string, options?: { readonly done?: boolean }): Answer =>
  (response) => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    for (const line of chunks.split("\n")) if (line.trim() !== "") response.write(`data: ${line}\n\n`)
    if (options?.done !== false) response.write("data: [DONE]\n\n")
    response.end()
  }

/** A body as recorded, with `status` and any extra headers. */
export const body =
  (bytes: Buffer | string, status = 200, headers?: Readonly<Record<string, string>>): Answer =>
  (response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers })
    response.end(bytes)
  }

/**
 * The status an error recording is served with: the one known from elsewhere, else 404 for an error whose type
 * says not found, else 400 (a refused request).
 */
export const statusOf = (recording: Recording): number =>
  recording.expected.statusFromElsewhere?.status ??
  (recording.body.toString("utf8").includes("not_found_error") ? 404 : 400)

/** A recording served as it was recorded. */
export const replay = (recording: Recording): Answer =>
  recording.expected.kind === "stream"
    ? sse(recording.body.toString("utf8"))
    : body(recording.body, recording.expected.kind === "error" ? statusOf(recording) : 200)

/** A plain last answer, "done", streamed or not (written here: the step after a recorded tool call). */
export const done = (streamed: boolean): Answer =>
  streamed
    ? sse(
        [
          { id: "local", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "done" } }] },
          { id: "local", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }
        ]
          .map((chunk) => JSON.stringify(chunk))
          .join("\n")
      )
    : body(
        JSON.stringify({
          id: "local",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "done" }, finish_reason: "stop" }]
        })
      )

/** A local server answering its requests from `answers`, in order (a request past the list gets a 500). */
export const serve = (answers: ReadonlyArray<Answer>): Effect.Effect<LocalServer.LocalServer, never, Scope.Scope> => {
  let next = 0
  return LocalServer.start((_request, response) => {
    const answer = answers[next++]
    if (answer === undefined) body(JSON.stringify({ error: { message: "no more answers" } }), 500)(response)
    else answer(response)
  })
}

/** The request bodies a server received, parsed. */
export const requestsOf = (server: LocalServer.LocalServer): ReadonlyArray<WireRequest> =>
  server.received.map((request) => JSON.parse(request.body) as WireRequest)

/** The part of a chat completions request the tests read. */
export interface WireRequest {
  readonly stream?: boolean
  readonly messages: ReadonlyArray<{
    readonly role: string
    readonly content: string | null
    readonly tool_call_id?: string
    readonly reasoning_content?: string
    readonly tool_calls?: ReadonlyArray<{
      readonly id: string
      readonly function: { readonly name: string; readonly arguments: string }
    }>
  }>
}
