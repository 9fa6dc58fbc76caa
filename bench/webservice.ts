/**
 * The cost of a webService action over Effect's HttpClient (issue 4).
 *
 * 1. 1,000 sequential GETs through `agent.executeAction` on a webService
 *    action, next to the same requests through a bare Effect `HttpClient`
 *    call (same undici layer), the bare call under `Effect.timeout` (what the
 *    attempt timeout every action call carries costs), and raw
 *    `undici.request` (for information), in one run, taking turns request by
 *    request. Target: action ≤ 1.10× the bare call.
 * 2. 10,000 concurrent calls of an action under a bulkhead policy:
 *    throughput, peak memory, and the peak concurrency the server saw.
 *
 * The server runs in a child process so its work does not share this
 * process's event loop. Prints figures; asserts nothing.
 *
 * Run: node bench/webservice.ts
 */
import { fork } from "node:child_process"
import * as http from "node:http"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Action, Agent, Role } from "@rolecraft/core"
import { Effect, Schema } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import { request } from "undici"

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
    const answer = () => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
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
}

if (process.argv[2] === "--serve") serve()
else await main()

// -----------------------------------------------------------------------------
// The client (this process)
// -----------------------------------------------------------------------------

async function main(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ["--serve"], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const next = <A>() => new Promise<A>((resolve) => child.once("message", (message) => resolve(message as A)))
  const { port } = await next<{ readonly port: number }>()
  const base = `http://127.0.0.1:${port}`
  const peak = async () => {
    const reply = next<{ readonly peak: number }>()
    child.send({ type: "peak" })
    return (await reply).peak
  }

  const travel = Role.make({
    identity: { name: "travel", goal: "Plan trips", domain: "travel" },
    actions: {
      temperature: Action.webService({
        description: "Get the current temperature for a city",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/current`,
        method: "GET",
        paramType: "QUERY"
      }),
      // The bare call as a local action's body, under the same 30 s attempt timeout: the
      // pipeline's share of the cost, without the webService executor.
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
      }).pipe(Action.resilience({ bulkhead: { maxConcurrent: 64, maxQueued: 10_000 } }))
    }
  })

  const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN

  const program = Effect.gen(function* () {
    const agent = yield* Agent.make({ id: "bench", roles: [travel] })
    const client = yield* HttpClient.HttpClient
    const url = `${base}/v1/current?city=Vienna`
    const bare = () => Effect.flatMap(client.get(url), (response) => response.json)
    const calls: Record<string, () => Effect.Effect<unknown, unknown, HttpClient.HttpClient>> = {
      "webService action (executeAction)": () => agent.executeAction("temperature", { city: "Vienna" }),
      "bare Effect HttpClient call": bare,
      "bare call + Effect.timeout 30 s": () => Effect.timeout(bare(), "30 seconds"),
      "bare call as a local action": () => agent.executeAction("bareInPipeline", { city: "Vienna" }),
      "raw undici.request": () =>
        Effect.promise(async () => {
          const response = await request(url)
          return response.body.json()
        })
    }
    const names = Object.keys(calls)
    const timings: Record<string, Array<number>> = Object.fromEntries(names.map((name) => [name, []]))

    // Warm-up, then 1,000 requests per way, taking turns request by request so that drift in
    // the machine's load falls on every way alike.
    for (let i = 0; i < 300; i++) for (const name of names) yield* calls[name]!()
    for (let i = 0; i < 1_000; i++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length]!
        const start = process.hrtime.bigint()
        yield* calls[name]!()
        timings[name]!.push(Number(process.hrtime.bigint() - start) / 1000)
      }
    }
    const figures = names.map((name) => {
      const sorted = [...timings[name]!].sort((a, b) => a - b)
      return { name, count: sorted.length, median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) }
    })
    const width = Math.max(...names.map((name) => name.length))
    console.log("1,000 sequential GETs each, against a local server (child process), taking turns")
    for (const f of figures) {
      console.log(
        `  ${f.name.padEnd(width)}  n=${f.count}  median ${f.median.toFixed(1).padStart(7)} µs   p95 ${f.p95.toFixed(1).padStart(7)} µs`
      )
    }
    const [action, plain, timed, local] = figures
    const ratio = (a: number, b: number) => `${(a / b).toFixed(3)}×`
    console.log(
      `  action / bare call:            median ${ratio(action!.median, plain!.median)}, p95 ${ratio(action!.p95, plain!.p95)} (target ≤ 1.10×)`
    )
    console.log(
      `  action / bare call + timeout:  median ${ratio(action!.median, timed!.median)}, p95 ${ratio(action!.p95, timed!.p95)} (every action attempt carries its 30 s timeout)`
    )
    console.log(
      `  where the time goes (medians): attempt timeout ${(timed!.median - plain!.median).toFixed(1)} µs, ` +
        `pipeline with its timeout ${(local!.median - plain!.median).toFixed(1)} µs, ` +
        `webService executor ${(action!.median - local!.median).toFixed(1)} µs`
    )

    // 10,000 concurrent calls under the bulkhead.
    yield* Effect.promise(peak)
    const total = 10_000
    let maxRss = 0
    let maxHeap = 0
    const sample = () => {
      const usage = process.memoryUsage()
      maxRss = Math.max(maxRss, usage.rss)
      maxHeap = Math.max(maxHeap, usage.heapUsed)
    }
    sample()
    const before = process.memoryUsage()
    const sampler = setInterval(sample, 5)
    const started = process.hrtime.bigint()
    const outcomes = yield* Effect.forEach(
      Array.from({ length: total }, (_, i) => i),
      () =>
        Effect.match(agent.executeAction("guarded", { city: "Vienna" }), {
          onSuccess: () => "ok",
          onFailure: (error) =>
            typeof error === "object" && error !== null && "category" in error ? String(error.category) : "other"
        }),
      { concurrency: "unbounded" }
    )
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    clearInterval(sampler)
    sample()
    const serverPeak = yield* Effect.promise(peak)
    const counts = outcomes.reduce<Record<string, number>>((out, outcome) => {
      out[outcome] = (out[outcome] ?? 0) + 1
      return out
    }, {})
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
    console.log(
      `\n${total.toLocaleString("en")} concurrent calls under a bulkhead (maxConcurrent 64, maxQueued 10,000)`
    )
    console.log(`  outcomes: ${JSON.stringify(counts)}`)
    console.log(`  wall ${seconds.toFixed(2)} s, throughput ${(total / seconds).toFixed(0)} calls/s`)
    console.log(
      `  memory: rss ${mb(before.rss)} before, peak ${mb(maxRss)}; heap used ${mb(before.heapUsed)} before, peak ${mb(maxHeap)}`
    )
    console.log(
      `  peak concurrent requests seen by the server: ${serverPeak}` +
        (serverPeak > 64
          ? " — more than maxConcurrent: the agent in this build does not enforce the bulkhead (Resilience.noGuards)"
          : " — within maxConcurrent")
    )
  }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))

  await Effect.runPromise(program)
  child.send({ type: "stop" })
}
