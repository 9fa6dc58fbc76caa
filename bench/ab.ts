/**
 * Before and after a change, in the same run: two builds of @rolecraft/core
 * side by side in one process, each path sampled round-robin with its
 * baseline, so what a change bought is read from one run on one machine
 * state, not from two runs minutes apart. Not part of `npm run bench`.
 *
 * Keep the build from before the change (`packages/core/dist` is ignored by
 * git), make the change, build again, then compare:
 *
 *   cp -r packages/core/dist /tmp/core-before && mv /tmp/core-before packages/core/dist/before
 *   # … change, npm run build …
 *   node bench/ab.ts packages/core/dist/before [webservice|pipeline|mcp|streaming|secrets]… [--hops]
 *
 * `--hops` adds the instrumented run (`hops.ts`) of each path's rows.
 *
 * The rebuilt `dist` keeps the `before/` folder (tsc writes over its own files only).
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as After from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { ConfigProvider, Effect, Layer, Redacted, Schema, Stream } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import { request } from "undici"
import { countHops, hopsTable } from "./hops.ts"
import { compare, type Contender } from "./measure.ts"
import { everything, rawStdioClient } from "./mcp.ts"
import { figuresTable, formatText, type Table } from "./report.ts"
import { startServer } from "./webservice.ts"

type Core = Pick<typeof After, "Action" | "Agent" | "Role" | "LanguageModel">

const [directory, ...asked] = process.argv.slice(2)
if (directory === undefined)
  throw new Error("usage: node bench/ab.ts <before dist directory> [webservice|pipeline|mcp|streaming|secrets]…")
const Before = (await import(pathToFileURL(resolve(directory, "index.js")).href)) as Core
const withHops = asked.includes("--hops")
const paths = asked.filter((path) => path !== "--hops").length === 0 ? ["webservice", "pipeline", "mcp"] : asked

const builds: ReadonlyArray<readonly [string, Core]> = [
  ["before", Before],
  ["after", After]
]

const roleOf = (core: Core, base: string) =>
  core.Role.make({
    identity: { name: "ab", goal: "Compare", domain: "bench" },
    actions: {
      temperature: core.Action.webService({
        description: "Get the current temperature for a city",
        parameters: { city: Schema.String },
        endpoint: `${base}/v1/current`,
        method: "GET",
        paramType: "QUERY"
      }),
      nights: core.Action.local({
        description: "Count the nights between two dates",
        parameters: { checkIn: Schema.String, checkOut: Schema.String },
        run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
      }),
      echo: core.Action.mcpTool({ description: "echo", server: everything, timeout: "10 seconds" })
    }
  })

const agents = (base: string) =>
  Effect.forEach(builds, ([name, core]) =>
    Effect.map(core.Agent.make({ id: `ab-${name}`, roles: [roleOf(core, base)] }), (agent) => [name, agent] as const)
  )

const tables: Array<Table> = []

const plan = { warmup: 2_000, samples: 300, batch: 10, budgetMs: 9_000, minSamples: 60 }

if (paths.includes("webservice")) {
  const server = await startServer()
  try {
    const rows = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* HttpClient.HttpClient
        const url = `${server.base}/v1/current?city=Vienna`
        const contenders: Array<Contender<Effect.Effect<unknown, unknown, HttpClient.HttpClient>>> = [
          { name: "bare Effect HttpClient call", call: () => Effect.flatMap(client.get(url), (r) => r.json) },
          {
            name: "raw undici.request",
            call: () => Effect.promise(async () => (await request(url)).body.json())
          }
        ]
        for (const [name, agent] of yield* agents(server.base)) {
          contenders.push({
            name: `webService action (${name})`,
            call: () => agent.executeAction("temperature", { city: "Vienna" })
          })
        }
        const rows = yield* compare(contenders, plan)
        if (withHops) tables.push(hopsTable("webService: what one call schedules", yield* countHops(contenders)))
        return rows
      }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
    )
    tables.push(figuresTable(rows, "bare Effect HttpClient call", "webService over a socket"))
  } finally {
    server.stop()
  }
}

if (paths.includes("pipeline")) {
  // biome-ignore lint/correctness/useYield: the same traced function as bench/pipeline.ts
  const traced = Effect.fn("nights")(function* (checkIn: string, checkOut: string) {
    return Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
  })
  const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }
  const rows = await Effect.runPromise(
    Effect.gen(function* () {
      const contenders: Array<Contender<Effect.Effect<unknown, unknown>>> = [
        { name: "traced Effect.fn", call: () => traced(args.checkIn, args.checkOut) }
      ]
      for (const [name, agent] of yield* agents("http://unused.invalid")) {
        contenders.push({ name: `executeAction local (${name})`, call: () => agent.executeAction("nights", args) })
      }
      const rows = yield* compare(contenders, { warmup: 20_000, samples: 150, batch: 200 })
      if (withHops) tables.push(hopsTable("local action: what one call schedules", yield* countHops(contenders)))
      return rows
    }).pipe(Effect.scoped)
  )
  tables.push(figuresTable(rows, "traced Effect.fn", "executeAction on a local action"))
}

if (paths.includes("mcp")) {
  const rows = await Effect.runPromise(
    Effect.gen(function* () {
      const raw = yield* rawStdioClient
      const contenders: Array<Contender<Effect.Effect<unknown, unknown, After.McpClient.McpClient>>> = [
        {
          name: "raw SDK client.callTool (stdio)",
          call: () => Effect.promise(() => raw.callTool({ name: "echo", arguments: { message: "hello" } }))
        }
      ]
      for (const [name, agent] of yield* agents("http://unused.invalid")) {
        contenders.push({
          name: `mcpTool action (${name})`,
          call: () => agent.executeAction("echo", { tool: "echo", arguments: { message: "hello" } })
        })
      }
      const rows = yield* compare(contenders, { ...plan, warmup: 1_000 })
      if (withHops) tables.push(hopsTable("mcpTool: what one call schedules", yield* countHops(contenders)))
      return rows
    }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
  )
  tables.push(figuresTable(rows, "raw SDK client.callTool (stdio)", "mcpTool over stdio"))
}

if (paths.includes("streaming")) {
  // The core of a streamed turn: a provider streaming 100 text deltas at once (as bench/streaming.ts's fake
  // stream), read by the stream reader within the call's limits, turned into chat events by the chat step.
  const chunks = [...Array.from({ length: 100 }, (_, i) => ({ text: `w${i} ` })), { finishReason: "stop" }]
  const role = (core: Core) => core.Role.make({ identity: { name: "ab", goal: "Answer", domain: "bench" } })
  const rows = await Effect.runPromise(
    Effect.gen(function* () {
      const contenders: Array<Contender<Effect.Effect<unknown, unknown>>> = []
      for (const [name, core] of builds) {
        const model = core.LanguageModel.make({ stream: () => Stream.fromIterable(chunks) }, { name: "ab" })
        const agent = yield* core.Agent.make({ id: `ab-stream-${name}`, roles: [role(core)] })
        const layer = Layer.succeed(core.LanguageModel.LanguageModel, model as never)
        contenders.push({
          name: `chatStream of 100 deltas (${name})`,
          call: () => Stream.runDrain(agent.chatStream("Hi", { maxSteps: 1 })).pipe(Effect.provide(layer))
        })
      }
      return yield* compare(contenders, { warmup: 2_000, samples: 200, batch: 10, budgetMs: 9_000, minSamples: 60 })
    }).pipe(Effect.scoped)
  )
  tables.push(figuresTable(rows, "chatStream of 100 deltas (before)", "a streamed turn of 100 deltas"))
}

if (paths.includes("secrets")) {
  // What the secrets boundary costs where secrets are known: an agent whose webService reads a bearer token
  // and whose model declares a key. A call that succeeds, one that fails (its error redacted of every secret the
  // agent knows), and a chat turn with one tool call (its tool message redacted, the secrets read once a turn).
  const server = await startServer()
  const key = "sk-bench-0123456789abcdef"
  const secretRole = (core: Core) =>
    core.Role.make({
      identity: { name: "secrets", goal: "Compare", domain: "bench" },
      actions: {
        authed: core.Action.webService({
          description: "Get the current temperature for a city",
          parameters: { city: Schema.String },
          endpoint: `${server.base}/v1/current`,
          method: "GET",
          paramType: "QUERY",
          auth: "BEARER",
          authTokenEnv: "BENCH_TOKEN"
        }),
        nights: core.Action.local({
          description: "Count the nights between two dates",
          parameters: { checkIn: Schema.String, checkOut: Schema.String },
          run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
        }),
        broken: core.Action.local({
          description: "Always fails",
          parameters: {},
          run: () => {
            throw new Error("the booking service is closed")
          }
        })
      }
    })
  const nightsRole = (core: Core) =>
    core.Role.make({
      identity: { name: "plain", goal: "Compare", domain: "bench" },
      actions: {
        nights: core.Action.local({
          description: "Count the nights between two dates",
          parameters: { checkIn: Schema.String, checkOut: Schema.String },
          run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
        })
      }
    })
  const modelOf = (core: Core, secrets: ReadonlyArray<Redacted.Redacted<string>>) =>
    core.LanguageModel.make(
      ({ request }) =>
        request.messages.some((message) => message.role === "tool")
          ? { text: "Three nights.", usage: { inputTokens: 10, outputTokens: 3 } }
          : {
              toolCalls: [{ id: "c1", name: "nights", arguments: '{"checkIn":"2026-11-02","checkOut":"2026-11-05"}' }],
              usage: { inputTokens: 10, outputTokens: 3 }
            },
      { name: "bench", secrets }
    )
  const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }
  try {
    for (const [title, pick] of [
      ["webService call with a bearer secret", "authed"],
      ["a failing call, agent with secrets", "broken"],
      ["chat turn, one tool call, model with a key", "chat"],
      ["chat turn, one tool call, no secret anywhere", "plain chat"],
      ["local call, agent with secrets", "nights"]
    ] as const) {
      const rows = await Effect.runPromise(
        Effect.gen(function* () {
          const contenders: Array<Contender<Effect.Effect<unknown, unknown, HttpClient.HttpClient>>> = []
          for (const [name, core] of builds) {
            const plain = pick === "plain chat"
            const roles = plain ? [nightsRole(core)] : [secretRole(core)]
            // Two role sets behind one name: the calls are picked at run time, so the agent is typed wide.
            const agent = (yield* core.Agent.make({ id: `secrets-${name}`, roles })) as unknown as After.Agent.Agent<
              Record<string, After.Action.Any>,
              HttpClient.HttpClient
            >
            const model = modelOf(core, plain ? [] : [Redacted.make(key)])
            const call: () => Effect.Effect<
              unknown,
              unknown,
              HttpClient.HttpClient | After.LanguageModel.LanguageModel
            > =
              pick === "chat" || plain
                ? () => agent.chat("How many nights?")
                : pick === "broken"
                  ? () => Effect.exit(agent.executeAction("broken", {}))
                  : pick === "authed"
                    ? () => agent.executeAction("authed", { city: "Vienna" })
                    : () => agent.executeAction("nights", args)
            contenders.push({
              name: `${title} (${name})`,
              call: () => Effect.provideService(call(), core.LanguageModel.LanguageModel, model)
            })
          }
          return yield* compare(
            contenders,
            pick === "nights" || pick === "broken" ? { warmup: 5_000, samples: 150, batch: 50 } : plan
          )
        }).pipe(
          Effect.scoped,
          Effect.provide(NodeHttpClient.layerUndici),
          Effect.provideService(
            ConfigProvider.ConfigProvider,
            ConfigProvider.fromEnv({ env: { BENCH_TOKEN: "bench-token-0123456789" } })
          )
        )
      )
      tables.push(figuresTable(rows, `${title} (before)`, title))
    }
  } finally {
    server.stop()
  }
}

console.log(formatText({ title: `before (${directory}) and after`, description: "", tables, targets: [], notes: [] }))
