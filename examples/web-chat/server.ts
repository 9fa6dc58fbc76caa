/**
 * The web chat's HTTP server, an Effect `HttpServer` (`@effect/platform-node`):
 *
 * - `GET /` — the page (`page.html`: plain HTML and JavaScript, no build);
 * - `POST /api/chat` `{ input, history }` — one chat turn streamed as
 *   server-sent events, one `ChatEvent` per `data:` line (`agent.chatStream`);
 * - `POST /api/resume` `{ state, decisions }` — a paused turn continued with
 *   `"approve"` or `"reject"` per pending tool call id (`agent.resumeStream`).
 *
 * A turn that fails ends its stream with `{ "_tag": "Failed", category,
 * message }`. The page owns the conversation: it sends back the messages of
 * the last finished turn with each question, and a paused turn's state with
 * its decisions.
 *
 * Closed by default (`guard.ts`): every request must name the listener in
 * its `Host` (and in its `Origin`, when a browser sends one), and each POST
 * must be JSON and carry the token its page was served with; anything else
 * is 403 (415 for another content type) before any work, so a page on
 * another origin or on a rebound name cannot run a turn or decide one.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { type ActionError, Chat, LanguageModel, Prompt } from "@rolecraft/core"
import { Context, Deferred, type Duration, Effect, Layer, Schema, type Scope, Stream } from "effect"
import type * as Config from "effect/Config"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Concierge from "./agent.ts"
import * as Guard from "./guard.ts"
import * as Model from "./model.ts"

const page = readFileSync(new URL("./page.html", import.meta.url), "utf8")

const ChatBody = Schema.Struct({
  input: Schema.String,
  history: Schema.optionalKey(Schema.Array(Prompt.Message))
})

const ResumeBody = Schema.Struct({
  state: Chat.PausedState,
  decisions: Schema.Record(Schema.String, Schema.Literals(["approve", "reject"]))
})

/** The approver's name recorded in the approval store for decisions made on the page. */
const approver = "web-chat user"

/** A turn's events as a server-sent event stream; a failure of the turn becomes its last event. */
const eventStream = (events: Stream.Stream<Chat.ChatEvent, ActionError.ActionError>) =>
  HttpServerResponse.stream(
    events.pipe(
      Stream.map((event) => JSON.stringify(event)),
      Stream.catch((error) =>
        Stream.succeed(JSON.stringify({ _tag: "Failed", category: error.category, message: error.message }))
      ),
      Stream.map((data) => `data: ${data}\n\n`),
      Stream.encodeText
    ),
    { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
  )

const badRequest = (error: { readonly message: string }) =>
  Effect.succeed(HttpServerResponse.text(`bad request: ${error.message}`, { status: 400 }))

/** `handler`, once the request passed the door (`changes`: a POST, which needs JSON and the page token). */
const guarded = <E, R>(
  door: Effect.Effect<Guard.Door>,
  changes: boolean,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.flatMap(Effect.zip(door, HttpServerRequest.HttpServerRequest), ([open, request]) => {
    const refused = open.refusal(request, changes)
    return refused === undefined
      ? handler
      : Effect.succeed(HttpServerResponse.text(`refused: ${refused.reason}`, { status: refused.status }))
  })

/** The routes over an agent and the model its turns use, behind `door` (known once the server listens). */
export const routes = (
  agent: Effect.Success<typeof Concierge.make>,
  model: LanguageModel.LanguageModel["Service"],
  door: Effect.Effect<Guard.Door>
) => {
  const withModel = <A, E>(stream: Stream.Stream<A, E>) =>
    Stream.provideService(stream, LanguageModel.LanguageModel, model)
  return HttpRouter.addAll([
    HttpRouter.route(
      "GET",
      "/",
      guarded(
        door,
        false,
        Effect.map(door, (open) => HttpServerResponse.html(page.replace("__CHAT_TOKEN__", open.pageToken())))
      )
    ),
    HttpRouter.route(
      "POST",
      "/api/chat",
      guarded(
        door,
        true,
        Effect.gen(function* () {
          const { input, history } = yield* HttpServerRequest.schemaBodyJson(ChatBody)
          const turn =
            history === undefined || history.length === 0
              ? agent.chatStream(input)
              : agent.chatStream([...history, { role: "user", content: input }])
          return eventStream(withModel(turn))
        }).pipe(Effect.catch(badRequest))
      )
    ),
    HttpRouter.route(
      "POST",
      "/api/resume",
      guarded(
        door,
        true,
        Effect.gen(function* () {
          const { state, decisions } = yield* HttpServerRequest.schemaBodyJson(ResumeBody)
          const decided = Object.fromEntries(
            Object.entries(decisions).map(([id, decision]) => [
              id,
              decision === "approve" ? Chat.approve(approver) : Chat.reject(approver, "rejected on the page")
            ])
          )
          return eventStream(withModel(agent.resumeStream(state, decided)))
        }).pipe(Effect.catch(badRequest))
      )
    )
  ])
}

/** A running web chat: its address and the model that answers. */
export interface WebChat {
  readonly url: string
  readonly model: Model.Model
}

/**
 * Starts the web chat on `host:port` (default 127.0.0.1, an ephemeral port)
 * for the life of the scope. `chunkDelay` paces the offline model's stream.
 * `allowedHosts` and `allowedOrigins` add names the chat answers besides the
 * listener's own (e.g. a proxy's `"chat.example.com"`, and its origin
 * `"https://chat.example.com"`).
 */
export const start = (options?: {
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly chunkDelay?: Duration.Input | undefined
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}): Effect.Effect<
  WebChat,
  Config.ConfigError | HttpServerError.ServeError | ActionError.RoleDefinitionError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const model = yield* Model.choose({ chunkDelay: options?.chunkDelay })
    const languageModel = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), model.layer)
    const agent = yield* Concierge.make
    const host = options?.host ?? "127.0.0.1"
    const door = yield* Deferred.make<Guard.Door>()
    const server = HttpRouter.serve(routes(agent, languageModel, Deferred.await(door)), {
      disableLogger: true,
      disableListenLog: true
    }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options?.port ?? 0, host })))
    const context = yield* Layer.build(server)
    const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
    yield* Deferred.succeed(
      door,
      Guard.make({
        host,
        port: Number(new URL(url).port),
        allowedHosts: options?.allowedHosts,
        allowedOrigins: options?.allowedOrigins
      })
    )
    return { url, model }
  })
