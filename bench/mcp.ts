/**
 * The cost of an mcpTool action (issue 5): sequential calls of
 * server-everything's `echo` over stdio through `agent.executeAction` (the
 * whole pipeline, the executor and the SDK layer) next to the raw SDK
 * `client.callTool` on a connection of its own to the same server, sampled
 * round-robin with the shared harness (`compare`), so load changes weigh on
 * both alike. Target (issue 27): the action ≤ 1.20× the raw SDK call (the aim: 1.10×).
 *
 * Also: the connect time (spawn + initialize) of each, and the same pair
 * against the SDK's `McpServer` over its `InMemoryTransport` (no process, no
 * pipe), where the difference is Rolecraft's own CPU cost per call
 * (pipeline, executor, layer) apart from I/O.
 *
 * Prints figures; asserts nothing.
 *
 * Run: node bench/mcp.ts
 */
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Action, Agent, McpClient, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { InMemoryMcp } from "@rolecraft/testing"
import { Effect } from "effect"
import { z } from "zod/v4"
import { countHops, hopsTable } from "./hops.ts"
import { compare, type Figures, loadedPass, type Options, spreadAcross } from "./measure.ts"
import { figuresTable, isMain, printSection, ratioTarget, type Section, spread, us } from "./report.ts"

const entry = fileURLToPath(
  new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
)
export const everything = { command: process.execPath, args: [entry, "stdio"] }

/** The sampling plans: batches of sequential calls, after a warm-up per row. */
const plans: Record<"stdio" | "memory", Options> = {
  stdio: { warmup: 1_000, samples: 300, batch: 10, budgetMs: 6_000, minSamples: 60 },
  memory: { warmup: 5_000, samples: 300, batch: 20, budgetMs: 4_000, minSamples: 60 }
}

const params = { tool: "echo", arguments: { message: "hello" } }

/** The echo answer, checked on every call so a row that stopped calling the tool cannot look fast. */
const expectEcho = (text: unknown) =>
  text === "Echo: hello" ? Effect.void : Effect.die(new Error(`unexpected answer ${JSON.stringify(text)}`))

const rawText = (result: unknown): unknown =>
  (result as { readonly content?: ReadonlyArray<{ readonly text?: unknown }> }).content?.[0]?.text

export const agentFor = (id: string, server: Action.McpServer) =>
  Agent.make({
    id,
    roles: [
      Role.make({
        identity: { name: "bench", goal: "Measure", domain: "bench" },
        actions: { echo: Action.mcpTool({ description: "echo", server, timeout: "10 seconds" }) }
      })
    ]
  })

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6

const timedMs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const start = process.hrtime.bigint()
    const value = yield* effect
    return [value, ms(start)] as const
  })

/** The raw SDK client over its own stdio connection, closed with the scope. */
export const rawStdioClient = Effect.acquireRelease(
  Effect.promise(async () => {
    const client = new Client({ name: "bench", version: "0.0.0" })
    await client.connect(new StdioClientTransport({ ...everything, stderr: "pipe" }))
    return client
  }),
  (client) => Effect.promise(() => client.close())
)

const stdio = Effect.gen(function* () {
  const [raw, rawConnectMs] = yield* timedMs(rawStdioClient)
  // The service's own connect, on a connection of its own (closed with the scope).
  const service = yield* McpClient.McpClient
  const [, serviceConnectMs] = yield* timedMs(service.connect(everything, { name: "bench" }))
  const agent = yield* agentFor("bench", everything)
  const [, firstCallMs] = yield* timedMs(agent.executeAction("echo", params))
  const contenders = [
    {
      name: "raw SDK client.callTool (stdio)",
      call: () =>
        Effect.flatMap(
          Effect.promise(() => raw.callTool({ name: "echo", arguments: { message: "hello" } })),
          (result) => expectEcho(rawText(result))
        )
    },
    {
      name: "mcpTool action (executeAction, stdio)",
      call: () => Effect.flatMap(agent.executeAction("echo", params), expectEcho)
    }
  ]
  const rows = yield* compare(contenders, plans.stdio)
  const hops = loadedPass() ? undefined : yield* countHops(contenders)
  return { rows, hops, rawConnectMs, serviceConnectMs, firstCallMs }
}).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))

const echoServer = () => {
  const server = new McpServer({ name: "echo", version: "1.0.0" })
  server.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: "text", text: `Echo: ${message}` }]
  }))
  return server
}

const inMemory = Effect.gen(function* () {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const client = new Client({ name: "bench", version: "0.0.0" })
  yield* Effect.promise(() => echoServer().connect(serverSide))
  yield* Effect.acquireRelease(
    Effect.promise(() => client.connect(clientSide)),
    () => Effect.promise(() => client.close())
  )
  const agent = yield* agentFor("bench-memory", "memory://echo")
  return yield* compare(
    [
      {
        name: "raw SDK client.callTool (in memory)",
        call: () =>
          Effect.flatMap(
            Effect.promise(() => client.callTool({ name: "echo", arguments: { message: "hello" } })),
            (result) => expectEcho(rawText(result))
          )
      },
      {
        name: "mcpTool action (executeAction, in memory)",
        call: () => Effect.flatMap(agent.executeAction("echo", params), expectEcho)
      }
    ],
    plans.memory
  )
}).pipe(Effect.scoped, Effect.provide(InMemoryMcp.layer({ "memory://echo": echoServer })))

/** The mcpTool bench as a report section (target: the action ≤ 1.20× the raw SDK client's callTool). */
export const bench = async (): Promise<Section> => {
  const { rows, hops, rawConnectMs, serviceConnectMs, firstCallMs } = await Effect.runPromise(stdio)
  const memory = await Effect.runPromise(inMemory)
  const [raw, action] = rows as ReadonlyArray<Figures | undefined>
  const [rawMemory, actionMemory] = memory as ReadonlyArray<Figures | undefined>
  const overhead = (a: Figures | undefined, b: Figures | undefined) =>
    spread(
      spreadAcross([a, b], ([x = Number.NaN, y = Number.NaN]) => x - y),
      us
    )
  return {
    title: "mcpTool against the raw MCP SDK client",
    description:
      "Sequential calls of server-everything's `echo` tool over stdio (a child process each side spawned once), " +
      "each answer checked: `agent.executeAction` on an mcpTool action (the whole pipeline, the executor finding " +
      "the tool in the cached list, converting the arguments against its inputSchema, calling it with its timeout " +
      "and turning the result into a value, through `McpClientSdk`) against the raw SDK `client.callTool` on a " +
      "connection of its own. Then the same pair against the SDK's `McpServer` over its `InMemoryTransport`, " +
      "where the difference is Rolecraft's own CPU per call. Each sample is the mean of a batch of sequential " +
      "calls; samples are taken in 3 rounds, each round-robin; a ratio's range is over the rounds.",
    tables: [
      figuresTable(rows, "raw SDK client.callTool (stdio)", "Over stdio (server-everything)"),
      figuresTable(memory, "raw SDK client.callTool (in memory)", "In memory (SDK McpServer, no process)"),
      ...(hops === undefined
        ? []
        : [hopsTable("What one call schedules over stdio (instrumented run, 500 calls each, per call)", hops)]),
      {
        title: "Connecting (spawn + initialize), once each",
        columns: ["", "ms"],
        rows: [
          ["raw SDK client.connect", rawConnectMs.toFixed(1)],
          ["McpClientSdk connect", serviceConnectMs.toFixed(1)],
          ["first executeAction (connect + tools/list + call)", firstCallMs.toFixed(1)]
        ]
      }
    ],
    targets: [ratioTarget("mcpTool action (stdio)", 1.2, "the raw SDK client's callTool", action, raw)],
    notes: [
      `Rolecraft's own CPU per call (in memory): ${overhead(actionMemory, rawMemory)} µs; over stdio the ` +
        `difference is ${overhead(action, raw)} µs.`
    ]
  }
}

if (isMain(import.meta)) await printSection(() => bench())
