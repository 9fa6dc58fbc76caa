/**
 * The web chat's HTTP server, an Effect `HttpServer` (`@effect/platform-node`):
 *
 * - `GET /` — the page (`page.html`: plain HTML and JavaScript, no build);
 * - `POST /api/thread` — a new thread for this page: `{ thread, key }`, the
 *   key sent back as `x-thread-key` on every request about the thread
 *   (`threads.ts`: the server keeps only its hash; 429 past 20 threads a
 *   page or 1,000 in all; a thread idle for 30 minutes is forgotten);
 * - `POST /api/chat` `{ thread, input }` — one chat turn on the thread,
 *   streamed as server-sent events, one `ChatEvent` per `data:` line
 *   (`agent.chatStream(input, { thread })`);
 * - `POST /api/resume` `{ thread, decisions }` — the thread's paused turn
 *   continued with `"approve"` or `"reject"` per pending tool call id
 *   (`agent.resumeStream(paused, decisions, { thread })`);
 * - `POST /api/thread/read` `{ thread }` — the thread as the store keeps it
 *   (`{ messages, paused }`), for a page opened again.
 *
 * A request on a thread without its key is answered 404, as for a thread
 * that does not exist: a thread id alone reads and changes nothing. A
 * question past 10,000 characters is 413.
 *
 * A turn that fails ends its stream with `{ "_tag": "Failed", category,
 * message }`. The conversation is kept in a thread of the `ThreadStore`
 * (in memory by default, or a SQLite file): the page only keeps the thread's
 * id, and sends each question and decision with it.
 *
 * Closed by default (`HttpDoor` of `@rolecraft/core`, its token in `x-chat-token`): every request must name the listener in
 * its `Host` (and in its `Origin`, when a browser sends one), and each POST
 * must be JSON and carry the token its page was served with; anything else
 * is 403 (415 for another content type) before any work, so a page on
 * another origin or on a rebound name cannot run a turn, read a thread or
 * decide one.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { type ActionError, Chat, HttpDoor, LanguageModel, type StoreBoundary, ThreadStore } from "@rolecraft/core"
import { Clock, Context, Deferred, type Duration, Effect, Layer, Schema, type Scope, Stream } from "effect"
import type * as Config from "effect/Config"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Concierge from "./agent.ts"
import * as Model from "./model.ts"
import * as Threads from "./threads.ts"

const page = readFileSync(new URL("./page.html", import.meta.url), "utf8")

const ChatBody = Schema.Struct({ thread: Schema.String, input: Schema.String })

const ReadBody = Schema.Struct({ thread: Schema.String })

/** The longest question a page may send: past it, 413. */
export const maxInputLength = 10_000

const ResumeBody = Schema.Struct({
  thread: Schema.String,
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

/** Answered for a thread the request does not hold the key of, as for one that does not exist. */
const noThread = HttpServerResponse.text("no such thread", { status: 404 })

/** `handler`, once the request carries the key of `thread` (see `threads.ts`). */
const holding = <E, R>(
  threads: Threads.Threads,
  thread: string,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.flatMap(Effect.zip(HttpServerRequest.HttpServerRequest, Clock.currentTimeMillis), ([request, now]) =>
    threads.holds(thread, request.headers[Threads.keyHeader], now) ? handler : Effect.succeed(noThread)
  )

/** `handler`, once the request passed the door (`changes`: a POST, which needs JSON and the page token). */
const guarded = <E, R>(
  door: Effect.Effect<HttpDoor.HttpDoor>,
  changes: boolean,
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.flatMap(Effect.zip(door, HttpServerRequest.HttpServerRequest), ([open, request]) => {
    const refused = open.refusal(request, changes)
    return refused === undefined
      ? handler
      : Effect.succeed(HttpServerResponse.text(`refused: ${refused.reason}`, { status: refused.status }))
  })

/**
 * The routes over an agent, the model its turns use and the store of its threads, behind `door` (known once the
 * server listens).
 */
export const routes = (
  agent: Effect.Success<typeof Concierge.make>,
  model: LanguageModel.LanguageModel["Service"],
  threads: ThreadStore.ThreadStore["Service"],
  door: Effect.Effect<HttpDoor.HttpDoor>,
  held: Threads.Threads = Threads.make()
) => {
  const withModel = <A, E>(stream: Stream.Stream<A, E, LanguageModel.LanguageModel | ThreadStore.ThreadStore>) =>
    Stream.provideService(
      Stream.provideService(stream, LanguageModel.LanguageModel, model),
      ThreadStore.ThreadStore,
      threads
    )
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
      "/api/thread",
      guarded(
        door,
        true,
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const open = yield* door
          const issued = held.issue(request.headers[open.tokenHeader] ?? "", yield* Clock.currentTimeMillis)
          return "refused" in issued
            ? HttpServerResponse.text(`too many threads: ${issued.refused}`, { status: 429 })
            : HttpServerResponse.jsonUnsafe(issued)
        })
      )
    ),
    HttpRouter.route(
      "POST",
      "/api/chat",
      guarded(
        door,
        true,
        Effect.gen(function* () {
          const { thread, input } = yield* HttpServerRequest.schemaBodyJson(ChatBody)
          if (input.length > maxInputLength) {
            return HttpServerResponse.text(`the question is longer than ${maxInputLength} characters`, { status: 413 })
          }
          return yield* holding(
            held,
            thread,
            Effect.succeed(eventStream(withModel(agent.chatStream(input, { thread }))))
          )
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
          const { thread, decisions } = yield* HttpServerRequest.schemaBodyJson(ResumeBody)
          return yield* holding(
            held,
            thread,
            Effect.gen(function* () {
              const { paused } = yield* threads.read(thread)
              if (paused === undefined) return HttpServerResponse.text("the thread has no paused turn", { status: 409 })
              const decided = Object.fromEntries(
                Object.entries(decisions).map(([id, decision]) => [
                  id,
                  decision === "approve" ? Chat.approve(approver) : Chat.reject(approver, "rejected on the page")
                ])
              )
              return eventStream(withModel(agent.resumeStream(paused, decided, { thread })))
            })
          )
        }).pipe(Effect.catch(badRequest))
      )
    ),
    // Reading a thread needs the same proof as changing it: the page token and the thread's key.
    HttpRouter.route(
      "POST",
      "/api/thread/read",
      guarded(
        door,
        true,
        Effect.gen(function* () {
          const { thread } = yield* HttpServerRequest.schemaBodyJson(ReadBody)
          return yield* holding(
            held,
            thread,
            Effect.map(threads.read(thread), (kept) =>
              HttpServerResponse.jsonUnsafe({ messages: kept.messages, paused: kept.paused })
            )
          )
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
 * for the life of the scope. `chunkDelay` paces the offline model's stream;
 * `threadsFile` keeps the conversations in a SQLite file (default: in
 * memory, for the life of the server). `allowedHosts` and `allowedOrigins`
 * add names the chat answers besides the listener's own (e.g. a proxy's
 * `"chat.example.com"`, and its origin `"https://chat.example.com"`).
 */
export const start = (options?: {
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly chunkDelay?: Duration.Input | undefined
  readonly threadsFile?: string | undefined
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  readonly threadBounds?:
    | {
        readonly perPage?: number | undefined
        readonly total?: number | undefined
        readonly idleMs?: number | undefined
      }
    | undefined
}): Effect.Effect<
  WebChat,
  Config.ConfigError | HttpServerError.ServeError | ActionError.RoleDefinitionError | StoreBoundary.StoreError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const model = yield* Model.choose({ chunkDelay: options?.chunkDelay })
    const languageModel = yield* Effect.provide(Effect.service(LanguageModel.LanguageModel), model.layer)
    const threadsLayer =
      options?.threadsFile === undefined
        ? ThreadStore.layerMemory
        : ThreadStore.layerSqlite({ filename: options.threadsFile })
    const threads = Context.get(yield* Layer.build(threadsLayer), ThreadStore.ThreadStore)
    const agent = yield* Concierge.make
    const host = options?.host ?? "127.0.0.1"
    const door = yield* Deferred.make<HttpDoor.HttpDoor>()
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    const held = Threads.make({
      ...options?.threadBounds,
      forget: (thread) => runFork(Effect.ignore(threads.delete(thread)))
    })
    const server = HttpRouter.serve(routes(agent, languageModel, threads, Deferred.await(door), held), {
      disableLogger: true,
      disableListenLog: true
    }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options?.port ?? 0, host })))
    const context = yield* Layer.build(server)
    const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
    yield* Deferred.succeed(
      door,
      HttpDoor.make({
        tokenHeader: "x-chat-token",
        host,
        port: Number(new URL(url).port),
        allowedHosts: options?.allowedHosts,
        allowedOrigins: options?.allowedOrigins
      })
    )
    return { url, model }
  })
