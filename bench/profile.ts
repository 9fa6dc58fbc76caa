/**
 * One I/O path in a loop, for `node --cpu-prof` and for the hop counts of
 * one path alone: the profile of a webService action set beside the profile
 * of the bare calls it is measured against shows where Rolecraft's own time
 * per call goes. Not part of `npm run bench`.
 *
 * Run: node bench/profile.ts <path> [seconds] [profile.cpuprofile]
 * where <path> is one of: webservice-action, webservice-bare, webservice-local,
 * undici, mcp-action, mcp-raw, pipeline-local (a local action, no I/O),
 * pipeline-policies (the same with every policy but approval on). Prints µs per call; with a file name, writes
 * a CPU profile of the timed loop only (after the warm-up: start-up, module
 * loading and compilation are left out) through `node:inspector`.
 * `node bench/profile.ts summary <file.cpuprofile>` prints a profile's self
 * time by where the code lives (Rolecraft, effect, undici, the MCP SDK, node,
 * GC, idle) and its heaviest functions.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Action, Agent, KnowledgeBase, Role } from "@rolecraft/core"
import { McpClientSdk } from "@rolecraft/mcp"
import { Effect, Layer, Schema } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import { request } from "undici"
import { agentFor, everything, rawStdioClient } from "./mcp.ts"
import { corpus, strict } from "./pipeline.ts"
import { isMain } from "./report.ts"
import { roleFor, startServer } from "./webservice.ts"

type Path =
  | "webservice-action"
  | "webservice-bare"
  | "webservice-local"
  | "undici"
  | "mcp-action"
  | "mcp-raw"
  | "pipeline-local"
  | "pipeline-policies"

const travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
    })
  }
})

let profileTo: string | undefined

const session = new Session()

const loop = <R>(seconds: number, call: () => Effect.Effect<unknown, unknown, R>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 2000; i++) yield* call()
    if (profileTo !== undefined) {
      session.connect()
      yield* Effect.promise(() => session.post("Profiler.enable"))
      yield* Effect.promise(() => session.post("Profiler.setSamplingInterval", { interval: 100 }))
      yield* Effect.promise(() => session.post("Profiler.start"))
    }
    const deadline = performance.now() + seconds * 1000
    let calls = 0
    const start = performance.now()
    while (performance.now() < deadline) {
      for (let i = 0; i < 100; i++) yield* call()
      calls += 100
    }
    const elapsed = performance.now() - start
    if (profileTo !== undefined) {
      const { profile } = yield* Effect.promise(() => session.post("Profiler.stop"))
      writeFileSync(profileTo, JSON.stringify(profile))
      session.disconnect()
    }
    console.log(`${calls} calls, ${((elapsed * 1000) / calls).toFixed(1)} µs per call`)
  })

export const profile = async (path: Path, seconds: number): Promise<void> => {
  if (path === "pipeline-local") {
    const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }
    await Effect.runPromise(
      Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "profile", roles: [travel] })
        return yield* loop(seconds, () => agent.executeAction("nights", args))
      }).pipe(Effect.scoped)
    )
    return
  }
  if (path === "pipeline-policies") {
    const args = { checkIn: "2026-11-02", checkOut: "2026-11-05" }
    await Effect.runPromise(
      Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "profile", roles: [strict] })
        return yield* loop(seconds, () => agent.executeAction("everyPolicyButApproval", args))
      }).pipe(
        Effect.scoped,
        Effect.provide(
          Layer.effect(KnowledgeBase.KnowledgeBase, KnowledgeBase.make({ load: () => Effect.succeed(corpus) }))
        )
      )
    )
    return
  }
  if (path.startsWith("mcp")) {
    await Effect.runPromise(
      Effect.gen(function* () {
        if (path === "mcp-raw") {
          const raw = yield* rawStdioClient
          return yield* loop(seconds, () =>
            Effect.promise(() => raw.callTool({ name: "echo", arguments: { message: "hello" } }))
          )
        }
        const agent = yield* agentFor("profile", everything)
        return yield* loop(seconds, () =>
          agent.executeAction("echo", { tool: "echo", arguments: { message: "hello" } })
        )
      }).pipe(Effect.scoped, Effect.provide(McpClientSdk.layer()))
    )
    return
  }
  const server = await startServer()
  try {
    await Effect.runPromise(
      Effect.gen(function* () {
        const agent = yield* Agent.make({ id: "profile", roles: [roleFor(server.base)] })
        const client = yield* HttpClient.HttpClient
        const url = `${server.base}/v1/current?city=Vienna`
        switch (path) {
          case "webservice-action":
            return yield* loop(seconds, () => agent.executeAction("temperature", { city: "Vienna" }))
          case "webservice-local":
            return yield* loop(seconds, () => agent.executeAction("bareInPipeline", { city: "Vienna" }))
          case "webservice-bare":
            return yield* loop(seconds, () => Effect.flatMap(client.get(url), (response) => response.json))
          case "undici":
            return yield* loop(seconds, () => Effect.promise(async () => (await request(url)).body.json()))
        }
      }).pipe(Effect.scoped, Effect.provide(NodeHttpClient.layerUndici))
    )
  } finally {
    server.stop()
  }
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}

/** Self time of a `.cpuprofile` by where the code lives, and its heaviest functions. */
export const summary = (file: string): string => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    readonly nodes: ReadonlyArray<ProfileNode>
    readonly samples: ReadonlyArray<number>
    readonly timeDeltas: ReadonlyArray<number>
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const where = (node: ProfileNode): string => {
    const { url, functionName } = node.callFrame
    if (url === "") return functionName === "(idle)" ? "idle" : functionName.startsWith("(") ? functionName : "native"
    if (url.includes("/packages/core/")) return "rolecraft core"
    if (url.includes("/packages/mcp/")) return "rolecraft mcp"
    if (url.includes("/node_modules/effect/")) return "effect"
    if (url.includes("/@effect/platform-node")) return "@effect/platform-node"
    if (url.includes("/undici/")) return "undici"
    if (url.includes("@modelcontextprotocol")) return "MCP SDK"
    if (url.includes("/zod/")) return "zod"
    if (url.startsWith("node:")) return "node"
    if (url.includes("/bench/")) return "bench"
    return "other"
  }
  const groups = new Map<string, number>()
  const functions = new Map<string, number>()
  let total = 0
  for (const [id, time] of self) {
    const node = byId.get(id)
    if (node === undefined) continue
    total += time
    const group = where(node)
    groups.set(group, (groups.get(group) ?? 0) + time)
    const key = `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.replace(/^.*node_modules\//, "").replace(/^.*\/packages\//, "packages/")}:${node.callFrame.lineNumber + 1}`
    functions.set(key, (functions.get(key) ?? 0) + time)
  }
  const percent = (time: number) => `${((100 * time) / total).toFixed(1)}%`
  const sorted = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, time]) => `  ${percent(time).padStart(6)}  ${(time / 1000).toFixed(0).padStart(6)} ms  ${name}`)
  return [
    `total ${(total / 1000).toFixed(0)} ms`,
    "by where:",
    ...sorted(groups, 20),
    "heaviest functions:",
    ...sorted(functions, 40)
  ].join("\n")
}

if (isMain(import.meta)) {
  const [path, argument, file] = process.argv.slice(2)
  profileTo = file
  if (path === "summary" && argument !== undefined) console.log(summary(argument))
  else await profile(path as Path, Number(argument ?? 5))
}
