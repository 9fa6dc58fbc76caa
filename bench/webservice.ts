/**
 * The cost of a webService action over Effect's HttpClient (issue 4).
 *
 * 1. Sequential GETs through `agent.executeAction` on a webService action,
 *    next to the same request as a bare Effect `HttpClient` call (same undici
 *    layer, the body read as JSON), and for information: the bare call under
 *    `Effect.timeout` (what the attempt timeout every webService call carries
 *    would cost done that way), the bare call as a local action's body (the
 *    pipeline's share), and raw `undici.request`. One running Effect samples
 *    them round-robin with the shared harness (`compare`), so load changes
 *    weigh on every row alike. Target (issue 27): the action ≤ 1.15× the bare call (the aim: 1.10×).
 *    The same pair against an HttpClient answering in process (no socket)
 *    gives Rolecraft's own CPU per call, apart from I/O.
 *    Target: the action ≤ 1.40× raw `undici.request` too (the aim: 1.30×).
 * 2. An instrumented run (`hops.ts`): fiber suspensions, scheduler and timer
 *    hops, promises and I/O resources per call of each row.
 * 3. Kept failures (C44): the heap held per kept `ActionResponse` of a
 *    failed call (404 and 503) against a kept success.
 * 4. 10,000 concurrent calls of an action under a bulkhead policy
 *    (maxConcurrent 64): throughput, peak memory, and the peak concurrency
 *    the server saw (more than 64 would mean the bulkhead leaks).
 *
 * In the loaded pass (`--loaded`) the instrumented run and the 10,000 calls
 * are left out: they are no timing and do not change with load.
 *
 * The server runs in a child process so its work does not share this
 * process's event loop. Prints figures; asserts nothing.
 *
 * Run: node bench/webservice.ts
 */
import { type ChildProcess, fork } from "node:child_process"
import * as http from "node:http"
import { fileURLToPath } from "node:url"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Action, type ActionRequest, Agent, Role } from "@rolecraft/core"
import { Effect, Layer, Schema } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import { request } from "undici"
import { countHops, type Hops, hopsTable } from "./hops.ts"
import {
  collectGarbage,
  compare,
  type Contender,
  type Figures,
  loadedPass,
  type Options,
  quickMode,
  spreadAcross
} from "./measure.ts"
import { figuresTable, isMain, printSection, ratioTarget, type Section, spread, type Table, us } from "./report.ts"

// -----------------------------------------------------------------------------
// The server (child process)
// -----------------------------------------------------------------------------

const serve = () => {
  let active = 0
  let peak = 0
  const server = http.createServer((incoming, response) => {
    active += 1
    peak = Math.max(peak, active)
    const body = JSON.stringify({ city: new URL(incoming.url ?? "/", "http://x").searchParams.get("city"), temp: 21 })
    // Under load, hold each answer a little so concurrency is visible.
    const delay = incoming.url?.startsWith("/v1/slow") ? 2 : 0
    // The failures whose kept responses are weighed: a refusal and an outage.
    const status = incoming.url?.startsWith("/v1/missing") ? 404 : incoming.url?.startsWith("/v1/down") ? 503 : 200
    const answer = () => {
      response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      response.end(body)
      active -= 1
    }
    if (delay === 0) answer()
    else setTimeout(answer, delay)
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    process.send?.({ port: typeof address === "object" && address !== null ? address.port : 0 })
  })
  process.on("message", (message: { readonly type: string }) => {
    if (message.type === "peak") {
      process.send?.({ peak })
      peak = 0
    } else if (message.type === "stop") server.close(() => process.exit(0))
  })
  process.on("disconnect", () => process.exit(0))
}

export interface Server {
  readonly base: string
  /** The most requests in flight at once since the last call, as the server saw them. */
  readonly peak: () => Promise<number>
  readonly stop: () => void
}

export const startServer = async (): Promise<Server> => {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--serve"], {
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const next = <A>() => new Promise<A>((resolve) => child.once("message", (message) => resolve(message as A)))
  const { port } = await next<{ readonly port: number }>()
  return {
    base: `http://127.0.0.1:${port}`,
    peak: async () => {
      const reply = next<{ readonly peak: number }>()
      child.send({ type: "peak" })
      return (await reply).peak
    },
    stop: () => {
      child.send({ type: "stop" })
      child.disconnect()
    }
  }
}

// -----------------------------------------------------------------------------
// The client (this process)
// -----------------------------------------------------------------------------

/** The sampling plan: batches of 10 sequential requests, after 2,000 warm-up requests per row. */
const plan: Options = { warmup: 2_000, samples: 300, batch: 10, budgetMs: 6_000, minSamples: 60 }

/** Calls of the bulkhead row (2,000 in quick mode). */
const concurrentCalls = quickMode() ? 2_000 : 10_000
const maxConcurrent = 64

export const roleFor = (base: string) =>
  Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    actions: {
      temperature: Action.webService({
        description: "Get the current temperature for a city",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/current`,
        method: "GET",
        paramType: "QUERY"
      }),
      // The bare call as a local action's body, under the same 30 s attempt timeout a webService
      // carries: the pipeline's share of the cost, without the webService executor.
      bareInPipeline: Action.local({
        description: "The bare HttpClient call as a local action",
        parameters: { city: Schema.String },
        run: ({ city }) =>
          Effect.flatMap(Effect.service(HttpClient.HttpClient), (client) =>
            Effect.flatMap(client.get(`${base}/v1/current?city=${encodeURIComponent(city)}`), (r) => r.json)
          )
      }).pipe(Action.resilience({ attemptTimeout: "30 seconds" })),
      guarded: Action.webService({
        description: "The same, held 2 ms by the server, under a bulkhead",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/slow`,
        method: "GET",
        paramType: "QUERY"
      }).pipe(Action.resilience({ bulkhead: { maxConcurrent, maxQueued: concurrentCalls } })),
      missing: Action.webService({
        description: "A document the server does not have (404)",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/missing`,
        method: "GET",
        paramType: "QUERY"
      }),
      down: Action.webService({
        description: "A service the server says is down (503)",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/down`,
        method: "GET",
        paramType: "QUERY"
      })
    }
  })

/** Calls kept per kind when weighing kept responses (500 in quick mode). */
const keptCalls = quickMode() ? 500 : 2_000

/** Heap held per kept `ActionResponse`, bytes, by kind of call. */
interface Kept {
  readonly success: number
  readonly refused: number
  readonly down: number
}

/**
 * The heap held per kept `ActionResponse` of `action`: a full GC, then
 * `keptCalls` sequential `agent.execute` calls whose responses are kept in an
 * array, a full GC, and the growth of the used heap divided by the calls
 * (after a warm-up, so one-time caches are not counted). Each response is
 * checked to be the expected outcome.
 */
const keptBytes = (
  agent: {
    readonly execute: (request: ActionRequest.ActionRequest) => Effect.Effect<unknown, unknown, HttpClient.HttpClient>
  },
  action: "temperature" | "missing" | "down",
  success: boolean
) =>
  Effect.gen(function* () {
    const call = Effect.flatMap(agent.execute({ action, params: { city: "Vienna" } }), (response) =>
      (response as { readonly success?: unknown }).success === success
        ? Effect.succeed(response)
        : Effect.die(new Error(`${action}: expected success ${success}, got ${JSON.stringify(response)}`))
    )
    for (let i = 0; i < 200; i++) yield* call
    collectGarbage()
    const before = process.memoryUsage().heapUsed
    const kept: Array<unknown> = []
    for (let i = 0; i < keptCalls; i++) kept.push(yield* call)
    collectGarbage()
    const after = process.memoryUsage().heapUsed
    return kept.length === keptCalls ? (after - before) / keptCalls : Number.NaN
  })

interface Load {
  readonly outcomes: Readonly<Record<string, number>>
  readonly seconds: number
  readonly before: NodeJS.MemoryUsage
  readonly peakRss: number
  readonly peakHeap: number
  readonly serverPeak: number
}

const measureAll = (server: Server) =>
  Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "bench", roles: [roleFor(server.base)] })
    const client = yield* HttpClient.HttpClient
    const url = `${server.base}/v1/current?city=Vienna`
    const bare = () => Effect.flatMap(client.get(url), (response) => response.json)
    // Each call checks its answer, so a row that stopped reaching the server cannot look fast.
    const checked =
      (effect: () => Effect.Effect<unknown, unknown, HttpClient.HttpClient>) =>
      (): Effect.Effect<unknown, unknown, HttpClient.HttpClient> =>
        Effect.flatMap(effect(), (body) =>
          typeof body === "object" && body !== null && (body as { readonly temp?: unknown }).temp === 21
            ? Effect.void
            : Effect.die(new Error(`unexpected answer ${JSON.stringify(body)}`))
        )
    const contenders: ReadonlyArray<Contender<Effect.Effect<unknown, unknown, HttpClient.HttpClient>>> = [
      {
        name: "webService action (executeAction)",
        call: checked(() => agent.executeAction("temperature", { city: "Vienna" }))
      },
      { name: "bare Effect HttpClient call", call: checked(bare) },
      { name: "bare call + Effect.timeout 30 s", call: checked(() => Effect.timeout(bare(), "30 seconds")) },
      {
        name: "bare call as a local action (30 s attempt timeout)",
        call: checked(() => agent.executeAction("bareInPipeline", { city: "Vienna" }))
      },
      {
        name: "raw undici.request",
        call: checked(() =>
          Effect.promise(async () => {
            const response = await request(url)
            return response.body.json()
          })
        )
      }
    ]
    const rows = yield* compare(contenders, plan)
    const kept: Kept = {
      success: yield* keptBytes(agent, "temperature", true),
      refused: yield* keptBytes(agent, "missing", false),
      down: yield* keptBytes(agent, "down", false)
    }
    const hops = loadedPass() || quickMode() ? undefined : yield* countHops(contenders)
    return { rows, kept, hops }
  }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

/**
 * 10,000 concurrent calls of the bulkhead-guarded action, run last (it leaves
 * a large heap behind that would colour any timing after it).
 */
const measureLoad = (server: Server) =>
  Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "bench-load", roles: [roleFor(server.base)] })
    yield* Effect.promise(server.peak)
    let peakRss = 0
    let peakHeap = 0
    const sample = () => {
      const usage = process.memoryUsage()
      peakRss = Math.max(peakRss, usage.rss)
      peakHeap = Math.max(peakHeap, usage.heapUsed)
    }
    const before = process.memoryUsage()
    sample()
    const sampler = setInterval(sample, 5)
    const started = process.hrtime.bigint()
    const outcomes = yield* Effect.forEach(
      Array.from({ length: concurrentCalls }, (_, i) => i),
      () =>
        Effect.match(agent.executeAction("guarded", { city: "Vienna" }), {
          onSuccess: () => "ok",
          onFailure: (error) => ("category" in error ? error.category : error._tag)
        }),
      { concurrency: "unbounded" }
    )
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    clearInterval(sampler)
    sample()
    const serverPeak = yield* Effect.promise(server.peak)
    const counts: Record<string, number> = {}
    for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1
    const load: Load = { outcomes: counts, seconds, before, peakRss, peakHeap, serverPeak }
    return load
  }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

/** A plan for the in-process pair: calls are a few tens of µs, so larger batches. */
const inProcessPlan: Options = { warmup: 5_000, samples: 300, batch: 50, budgetMs: 4_000, minSamples: 60 }

/**
 * The same pair against an `HttpClient` that answers in process (a canned
 * JSON `Response`, no socket): the difference is Rolecraft's own CPU per
 * call (pipeline, attempt timeout, executor), apart from I/O.
 */
const measureInProcess = Effect.gen(function* () {
  const base = "http://in-process.invalid"
  const agent = yield* Agent.make({ id: "bench-in-process", roles: [roleFor(base)] })
  const client = yield* HttpClient.HttpClient
  const url = `${base}/v1/current?city=Vienna`
  return yield* compare(
    [
      {
        name: "bare Effect HttpClient call (in process)",
        call: () => Effect.flatMap(client.get(url), (response) => response.json)
      },
      {
        name: "webService action (executeAction, in process)",
        call: () => agent.executeAction("temperature", { city: "Vienna" })
      }
    ],
    inProcessPlan
  )
}).pipe(
  Effect.scoped,
  Effect.provide(
    Layer.succeed(
      HttpClient.HttpClient,
      HttpClient.make((request) =>
        Effect.succeed(
          HttpClientResponse.fromWeb(
            request,
            new Response('{"city":"Vienna","temp":21}', { headers: { "content-type": "application/json" } })
          )
        )
      )
    )
  )
)

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`

const loadTable = (load: Load): Table => ({
  title: `${concurrentCalls.toLocaleString("en")} concurrent calls under a bulkhead (maxConcurrent ${maxConcurrent}, the server holds each answer 2 ms)`,
  columns: ["outcomes", "wall s", "calls/s", "peak requests in flight", "RSS before → peak", "heap before → peak"],
  rows: [
    [
      Object.entries(load.outcomes)
        .map(([outcome, count]) => `${outcome} ${count}`)
        .join(", "),
      load.seconds.toFixed(2),
      (concurrentCalls / load.seconds).toFixed(0),
      String(load.serverPeak),
      `${mib(load.before.rss)} → ${mib(load.peakRss)}`,
      `${mib(load.before.heapUsed)} → ${mib(load.peakHeap)}`
    ]
  ]
})

/** The webService bench as a report section (target: the action ≤ 1.15× the bare HttpClient call). */
const kib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(2)} KiB` : "—")

/**
 * A kept failure may hold at most this much more than a kept success, bytes:
 * room for its message and fields, not for a response or a connection.
 */
const keptSlack = 1024

/** The webService bench as a report section (targets: ≤ 1.15× the bare HttpClient call, ≤ 1.40× raw undici). */
export const bench = async (): Promise<Section> => {
  const server = await startServer()
  try {
    const { rows, kept, hops } = await Effect.runPromise(measureAll(server))
    const inProcess = await Effect.runPromise(measureInProcess)
    const load = loadedPass() ? undefined : await Effect.runPromise(measureLoad(server))
    const [bareInProcess, actionInProcess] = inProcess
    const find = (prefix: string): Figures | undefined => rows.find((row) => row.name.startsWith(prefix))
    const action = find("webService action")
    const bare = find("bare Effect HttpClient")
    const timed = find("bare call + Effect.timeout")
    const local = find("bare call as a local action (30 s attempt timeout)")
    const undici = find("raw undici.request")
    const delta = (a: Figures | undefined, b: Figures | undefined) =>
      spread(
        spreadAcross([a, b], ([x = Number.NaN, y = Number.NaN]) => x - y),
        us
      )
    const worstKept = Math.max(kept.refused, kept.down)
    return {
      title: "webService against a bare Effect HttpClient call and raw undici",
      description:
        "Sequential GETs of a small JSON document from a local HTTP server (a child process, keep-alive), each " +
        "answer checked. `agent.executeAction` on a webService action (the whole pipeline, its 30 s attempt " +
        "timeout, the executor building the request and classifying and decoding the response) against the same " +
        "request as a bare `HttpClient` call (`client.get(url)` then `response.json`, same undici layer) and raw " +
        `\`undici.request\`. Each sample is the mean of a batch of ${plan.batch} requests, after ${plan.warmup} ` +
        `warm-up requests per row; samples are taken in ${plan.rounds ?? 3} rounds, each round-robin (one batch of ` +
        "each row in turn); a ratio's range is over the rounds' medians.",
      tables: [
        figuresTable(rows, "bare Effect HttpClient call", "Over a socket (local server in a child process)"),
        figuresTable(
          inProcess,
          "bare Effect HttpClient call (in process)",
          "In process (an HttpClient answering at once)"
        ),
        ...(hops === undefined
          ? []
          : [hopsTable("What one call schedules over the socket (instrumented run, 500 calls each, per call)", hops)]),
        {
          title: `Heap held per kept ActionResponse (${keptCalls.toLocaleString("en")} sequential calls kept in an array, after a full GC)`,
          columns: ["outcome", "held per kept response", "× a success"],
          rows: [
            ["success (200, JSON)", kib(kept.success), "1.00×"],
            ["refused (404, ExecutionFailure)", kib(kept.refused), `${(kept.refused / kept.success).toFixed(2)}×`],
            ["down (503, TransientFailure)", kib(kept.down), `${(kept.down / kept.success).toFixed(2)}×`]
          ]
        },
        ...(load === undefined ? [] : [loadTable(load)])
      ],
      targets: [
        ratioTarget("webService action", 1.15, "a bare Effect HttpClient call", action, bare),
        ratioTarget("webService action over raw undici", 1.4, "raw undici.request", action, undici),
        {
          name: "kept failures' heap (webService, 404 and 503)",
          limit: "≤ a kept success + 1 KiB",
          measured: `${kib(worstKept)} vs ${kib(kept.success)} per kept response`,
          met: Number.isFinite(worstKept - kept.success) ? worstKept <= kept.success + keptSlack : undefined
        }
      ],
      notes: [
        `Rolecraft's own CPU per call (in process): ${delta(actionInProcess, bareInProcess)} µs; over the socket ` +
          `the difference is ${delta(action, bare)} µs.`,
        `Where the time goes over the socket (differences of medians): Effect.timeout on the bare call ${delta(timed, bare)} µs; ` +
          `the pipeline with the bare call as a local action ${delta(local, bare)} µs; ` +
          `the webService executor beyond that ${delta(action, local)} µs.`,
        ...(hops === undefined ? [] : [hopsNote(hops)]),
        ...(load === undefined
          ? []
          : [
              load.serverPeak > maxConcurrent
                ? `The server saw ${load.serverPeak} requests in flight at once: more than the bulkhead's ${maxConcurrent}.`
                : `The server never saw more than the bulkhead's ${maxConcurrent} requests in flight at once.`
            ])
      ]
    }
  } finally {
    server.stop()
  }
}

/** The instrumented run in one sentence: the action's suspensions beside the bare call's. */
const hopsNote = (hops: ReadonlyArray<Hops>): string => {
  const [action, bare] = hops
  const fiber = (h: Hops | undefined) => (h?.perCall["effect/Fiber"] ?? 0).toFixed(2)
  return (
    `Fiber suspensions per call: the webService action ${fiber(action)}, the bare HttpClient call ${fiber(bare)} ` +
    '(each is an `AsyncResource("effect/Fiber")` Effect creates when a fiber suspends or a fork starts later).'
  )
}

if (process.argv[2] === "--serve") serve()
else if (isMain(import.meta)) await printSection(bench)
