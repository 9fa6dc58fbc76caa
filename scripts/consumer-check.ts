/**
 * Installs Rolecraft the way a user does and runs a user's code against it.
 *
 * 1. `npm run build`, then `npm pack` of every publishable package into a
 *    temporary folder outside the repository.
 * 2. Two fresh projects there (`npm init -y`, `"type": "module"`), each
 *    installing the tarballs plus the peers from the registry:
 *    - `newest`: the peers at the newest versions their ranges allow;
 *    - `lowest`: the peers pinned to the lowest versions their ranges allow
 *      (`^4.1.0` → `4.1.0`).
 *    Both get `typescript`, `@types/node`, the MCP project's
 *    `@modelcontextprotocol/server-everything` (docs/mcp.md's programs spawn
 *    it) and a stock `tsconfig.json` from
 *    `tsc --init`, with `lib: ["es2023", "dom"]`, `skipLibCheck: false`,
 *    `types: ["node"]` (the line `tsc --init` suggests for Node) and
 *    `rewriteRelativeImportExtensions: true` (the README's two settings), so
 *    the user's own `./travel.ts` is imported as Node runs it.
 * 3. In each project: type-check and then run with plain `node` (type
 *    stripping) these programs, asserting what they print:
 *    - `first-agent.ts`: the README's first TypeScript block, read from
 *      README.md now, so the check follows the README;
 *    - `chat-turn.ts`: a chat turn through `@rolecraft/openai`'s layer against
 *      `ChatCompletionsServer` from `@rolecraft/testing`, the model calling a
 *      local action (from the user's own `./travel.ts`) before it answers;
 *    - `inspector-page.ts`: `@rolecraft/inspector` started beside the
 *      program serves its page and takes an OTLP request; its bin answers
 *      `--help`;
 *    - `claude-turn.ts`: the same turn through `@rolecraft/anthropic`'s layer
 *      against `MessagesServer`, with thinking on: its signed block is sent
 *      back on the second request;
 *    - every documentation block opened with ```` ```ts run ```` (see
 *      scripts/check-snippets.ts), read from the docs now: each must exit 0
 *      within a minute, printing every `// prints "…"` it promises. Among
 *      them docs/durable.md's first program and docs/mcp.md's agent of
 *      `mcpServers` only (`roles: []`), both under `NodeRuntime.runMain`.
 * 4. `npm ls effect --all` must show one version and one copy on disk.
 *
 * Every failure is named; the exit code is 0 only when all passed. npm reuses
 * its cache (`--prefer-offline`), so a warm run takes well under a minute
 * plus the build.
 *
 * Run: node scripts/consumer-check.ts [--keep]   (--keep leaves the temporary folder)
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { documentation, extract } from "./check-snippets.ts"
import { packages } from "./build.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const started = Date.now()
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`

/** The versions a user's project gets besides the peers the packages declare (what the README's install names). */
const userTools = {
  typescript: "7.0.2",
  "@types/node": "^24.0.0",
  "@modelcontextprotocol/server-everything": JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    .devDependencies["@modelcontextprotocol/server-everything"]
} as const
/** `@effect/platform-node`: @rolecraft/durable's peer, and every Node program runs with it. */
const runtimePeers = { "@effect/platform-node": "^4.1.0" } as const

interface Result {
  readonly status: number | null
  readonly output: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs = 120_000): Promise<Result> =>
  new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" }
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const timer = setTimeout(() => {
      output += `\n(killed after ${timeoutMs / 1000} s)`
      child.kill("SIGKILL")
    }, timeoutMs)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, output })
    })
  })

const failures: Array<string> = []
const fail = (what: string, detail: string) => {
  failures.push(what)
  console.log(`  ✗ ${what} [${seconds()}]\n${detail.trimEnd().replace(/^/gm, "      ")}`)
}
const pass = (what: string) => console.log(`  ✓ ${what} [${seconds()}]`)

/** A step that must succeed for the rest to make sense. */
const must = async (what: string, command: string, args: ReadonlyArray<string>, cwd: string) => {
  const result = await run(command, args, cwd)
  if (result.status !== 0) {
    fail(what, result.output)
    throw new Error(what)
  }
  return result.output
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"))

/** The peers the packages declare, merged (a peer shared by two packages must have one range). */
const declaredPeers = (): Record<string, string> => {
  const peers: Record<string, string> = { ...runtimePeers }
  for (const name of packages) {
    const manifest = readJson(join(root, "packages", name, "package.json"))
    for (const [peer, range] of Object.entries<string>(manifest.peerDependencies ?? {})) {
      if (peers[peer] !== undefined && peers[peer] !== range)
        throw new Error(`@rolecraft/${name} asks ${peer}@${range}, another package ${peers[peer]}`)
      peers[peer] = range
    }
  }
  return peers
}

/** The lowest version a caret or plain range allows: `^4.1.0` → `4.1.0`. */
const lowest = (range: string): string => {
  const match = /^[\^~]?(\d+\.\d+\.\d+)$/.exec(range.trim())
  if (match?.[1] === undefined) throw new Error(`cannot take the lowest version of the range ${range}`)
  return match[1]
}

/** The README's first TypeScript block: the user's first agent. */
const firstAgent = (): string => {
  const [first] = extract("README.md", readFileSync(join(root, "README.md"), "utf8"))
  if (first === undefined) throw new Error("README.md has no TypeScript block")
  return first.code
}

/** A module of the user's own, imported as `./travel.ts` (what `rewriteRelativeImportExtensions` allows). */
const travelModule = `import { Action, Role } from "@rolecraft/core"
import { Schema } from "effect"

export const Travel = Role.make({
  identity: { name: "travel", goal: "Plan trips", domain: "travel" },
  actions: {
    nights: Action.local({
      description: "Count the nights between two ISO dates",
      parameters: { checkIn: Schema.String, checkOut: Schema.String },
      run: ({ checkIn, checkOut }) => (Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000
    })
  }
})
`

const chatTurn = `import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Agent } from "@rolecraft/core"
import { OpenAiLanguageModel } from "@rolecraft/openai"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Console, Effect, Redacted } from "effect"
import { Travel } from "./travel.ts"

const program = Effect.gen(function* () {
  const endpoint = yield* ChatCompletionsServer.make([
    ChatCompletionsServer.toolCalls([{ name: "nights", arguments: { checkIn: "2026-11-02", checkOut: "2026-11-05" } }]),
    ChatCompletionsServer.reply("Three nights in Vienna.")
  ])
  const model = OpenAiLanguageModel.layer({
    model: "gpt-4.1-mini",
    apiKey: Redacted.make("sk-local"),
    baseURL: endpoint.baseURL,
    timeout: "10 seconds"
  })
  const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
  const result = yield* agent.chat("How many nights from 2 to 5 November?").pipe(Effect.provide(model))
  if (result._tag !== "Completed") return yield* Effect.die(new Error(\`the turn ended with \${result._tag}\`))
  for (const message of result.messages) {
    if (message.role === "tool") yield* Console.log(\`tool: \${message.content}\`)
    if (message.role === "assistant" && message.content !== "") yield* Console.log(\`answer: \${message.content}\`)
  }
  yield* Console.log(\`requests: \${(yield* endpoint.requests).length}\`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
`

/** The inspector as a user starts it: beside the program (its page served), and its bin. */
const inspectorPage = `import { execFileSync } from "node:child_process"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Inspector } from "@rolecraft/inspector"
import { Console, Effect } from "effect"

const program = Effect.gen(function* () {
  const inspector = yield* Inspector.start()
  const page = yield* Effect.promise(() => fetch(inspector.url))
  const html = yield* Effect.promise(() => page.text())
  yield* Console.log(\`page: \${page.status} \${html.includes("<title>Rolecraft inspector</title>") ? "the inspector's" : "another"}\`)
  const traces = yield* Effect.promise(() =>
    fetch(\`\${inspector.url}/v1/traces\`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ resourceSpans: [] })
    })
  )
  yield* Console.log(\`traces: \${traces.status}\`)
  const help = execFileSync("node_modules/.bin/rolecraft-inspector", ["--help"], { encoding: "utf8" })
  yield* Console.log(help.trim().split("\\n")[0] ?? "")
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
`

const claudeTurn = `import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { AnthropicLanguageModel } from "@rolecraft/anthropic"
import { Agent } from "@rolecraft/core"
import { MessagesServer } from "@rolecraft/testing"
import { Console, Effect, Redacted } from "effect"
import { Travel } from "./travel.ts"

const program = Effect.gen(function* () {
  const endpoint = yield* MessagesServer.make([
    MessagesServer.toolUse([{ name: "nights", input: { checkIn: "2026-11-02", checkOut: "2026-11-05" } }], {
      thinking: [{ thinking: "Count the nights.", signature: "sig-consumer" }]
    }),
    MessagesServer.reply("Three nights in Vienna.")
  ])
  const model = AnthropicLanguageModel.layer({
    model: "claude-haiku-4-5",
    apiKey: Redacted.make("sk-ant-local"),
    baseURL: endpoint.baseURL,
    thinking: { type: "enabled", budgetTokens: 1024 },
    timeout: "10 seconds"
  })
  const agent = yield* Agent.make({ id: "planner", roles: [Travel] })
  const result = yield* agent.chat("How many nights from 2 to 5 November?").pipe(Effect.provide(model))
  if (result._tag !== "Completed") return yield* Effect.die(new Error(\`the turn ended with \${result._tag}\`))
  yield* Console.log(\`answer: \${result.text}\`)
  const [, second] = yield* endpoint.requests
  const sent = (second?.body as { messages: Array<{ role: string; content: Array<{ type: string; signature?: string }> }> })
    .messages.find((message) => message.role === "assistant")
  yield* Console.log(\`thinking sent back: \${sent?.content[0]?.type} \${sent?.content[0]?.signature}\`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(program)
`

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The documentation's programs (blocks opened with `ts run`), each expected to print what its `// prints "…"` say. */
const docPrograms = () =>
  documentation()
    .flatMap((page) => extract(page, readFileSync(join(root, page), "utf8")))
    .filter((snippet) => snippet.run)
    .map((snippet) => ({
      file: `doc-${snippet.file.replace(/\.md$/, "").replace(/\W/g, "-")}-${snippet.line}.ts`,
      code: () => snippet.code,
      expect: [...snippet.code.matchAll(/\/\/ prints "([^"]+)"/g)].map(
        (match) => new RegExp(`^${escapeRegExp(match[1] ?? "")}$`, "m")
      )
    }))

/** What each program must print, line by line (a line may carry more after the expected start). */
const programs: ReadonlyArray<{
  readonly file: string
  readonly code: () => string
  readonly expect: ReadonlyArray<RegExp>
}> = [
  { file: "first-agent.ts", code: firstAgent, expect: [/^3 nights$/m, /^VALIDATION: .*checkOut/m] },
  {
    file: "chat-turn.ts",
    code: () => chatTurn,
    expect: [/^tool: 3$/m, /^answer: Three nights in Vienna\.$/m, /^requests: 2$/m]
  },
  {
    file: "inspector-page.ts",
    code: () => inspectorPage,
    expect: [/^page: 200 the inspector's$/m, /^traces: 200$/m, /^usage: rolecraft-inspector /m]
  },
  {
    file: "claude-turn.ts",
    code: () => claudeTurn,
    expect: [/^answer: Three nights in Vienna\.$/m, /^thinking sent back: thinking sig-consumer$/m]
  },
  ...docPrograms()
]

/** Sets a project up; returns its folder and the peer versions installed, or undefined when a step failed. */
const setUp = async (
  name: string,
  folder: string,
  tarballs: ReadonlyArray<string>,
  peers: Record<string, string>
): Promise<{ readonly dir: string; readonly installed: string } | undefined> => {
  const dir = join(folder, name)
  mkdirSync(dir)
  const label = (what: string) => `${name}: ${what}`
  try {
    await must(label("npm init -y"), npm, ["init", "-y"], dir)
    await must(label("npm pkg set type=module"), npm, ["pkg", "set", "type=module"], dir)
    const specs = [
      ...tarballs,
      ...Object.entries({ ...peers, ...userTools }).map(([peer, version]) => `${peer}@${version}`)
    ]
    await must(
      label(`npm install ${specs.map((spec) => spec.replace(/^.*\//, "")).join(" ")}`),
      npm,
      ["install", "--prefer-offline", "--no-audit", "--no-fund", ...specs],
      dir
    )
    await must(
      label("tsc --init"),
      join(dir, "node_modules/.bin/tsc"),
      [
        "--init",
        "--lib",
        "es2023,dom",
        "--skipLibCheck",
        "false",
        "--types",
        "node",
        "--rewriteRelativeImportExtensions",
        "true"
      ],
      dir
    )
  } catch {
    return undefined
  }
  const installed = Object.keys(peers)
    .map((peer) => `${peer}@${readJson(join(dir, "node_modules", peer, "package.json")).version}`)
    .join(", ")
  console.log(`  ${name}: installed ${installed} [${seconds()}]`)
  return { dir, installed }
}

/** Type-checks and runs the user's programs in a project, and counts its copies of effect. */
const exercise = async (name: string, dir: string): Promise<void> => {
  const label = (what: string) => `${name}: ${what}`

  writeFileSync(join(dir, "travel.ts"), travelModule)
  for (const program of programs) writeFileSync(join(dir, program.file), program.code())
  const tsc = await run(join(dir, "node_modules/.bin/tsc"), ["--noEmit", "-p", "."], dir)
  if (tsc.status === 0)
    pass(label(`tsc --noEmit (stock tsc --init config) on ${programs.map((p) => p.file).join(", ")}`))
  else fail(label("tsc --noEmit with the stock tsc --init config"), tsc.output)

  for (const program of programs) {
    const ran = await run(process.execPath, [program.file], dir, 60_000)
    const missing = program.expect.filter((pattern) => !pattern.test(ran.output))
    if (ran.status === 0 && missing.length === 0) pass(label(`node ${program.file}`))
    else
      fail(
        label(`node ${program.file}`),
        `exit ${ran.status}; expected ${missing.map(String).join(", ") || "exit 0"}\n--- output ---\n${ran.output}`
      )
  }

  const ls = await run(npm, ["ls", "effect", "--all", "--json"], dir)
  const versions = new Set<string>()
  const walk = (node: { version?: string; dependencies?: Record<string, unknown> }, key: string) => {
    if (key === "effect" && node.version !== undefined) versions.add(node.version)
    for (const [child, value] of Object.entries(node.dependencies ?? {})) walk(value as typeof node, child)
  }
  try {
    walk(JSON.parse(ls.output.slice(ls.output.indexOf("{"))), "")
  } catch {
    versions.add("(npm ls gave no JSON)")
  }
  const copies = (readdirSync(join(dir, "node_modules"), { recursive: true, encoding: "utf8" }) as Array<string>)
    .filter((path) => path === "effect/package.json" || path.endsWith("/node_modules/effect/package.json"))
    .filter((path) => readJson(join(dir, "node_modules", path)).name === "effect")
  if (ls.status === 0 && versions.size === 1 && copies.length === 1)
    pass(label(`npm ls effect --all: one copy (effect@${[...versions][0]})`))
  else
    fail(
      label("npm ls effect --all shows one copy"),
      `versions: ${[...versions].join(", ")}; copies: ${copies.join(", ")}\n${(await run(npm, ["ls", "effect", "--all"], dir)).output}`
    )
}

const main = async () => {
  const keep = process.argv.includes("--keep")
  const folder = mkdtempSync(join(tmpdir(), "rolecraft-consumer-"))
  console.log(`consumer check in ${folder}`)
  try {
    await must("npm run build", npm, ["run", "build"], root)
    pass("npm run build")
    const packs = join(folder, "tarballs")
    mkdirSync(packs)
    const packed = await must(
      "npm pack",
      npm,
      ["pack", "--json", "--pack-destination", packs, ...packages.flatMap((name) => ["-w", `@rolecraft/${name}`])],
      root
    )
    const manifests: ReadonlyArray<{
      name: string
      filename: string
      entryCount: number
      files: Array<{ path: string }>
    }> = JSON.parse(packed.slice(packed.indexOf("[")))
    for (const manifest of manifests) {
      const leftovers = manifest.files
        .map((file) => file.path)
        .filter((path) => /\.tsbuildinfo$|(^|\/)test\/|\.test\.ts$|(^|\/)\.snippets/.test(path))
      if (leftovers.length === 0) pass(`${manifest.name}: ${manifest.entryCount} files packed, no leftovers`)
      else fail(`${manifest.name}: no build or test files in the tarball`, leftovers.join("\n"))
      for (const file of ["LICENSE", "README.md"]) {
        if (manifest.files.some((packed) => packed.path === file)) pass(`${manifest.name}: its ${file} is packed`)
        else fail(`${manifest.name}: its ${file} is packed`, `no ${file} in the tarball`)
      }
    }
    const tarballs = manifests.map((manifest) => join(packs, manifest.filename))
    const missing = tarballs.filter((file) => !existsSync(file))
    if (missing.length > 0) {
      fail("npm pack wrote every tarball", missing.join("\n"))
      throw new Error("npm pack")
    }
    const peers = declaredPeers()
    const lowestPeers = Object.fromEntries(Object.entries(peers).map(([peer, range]) => [peer, lowest(range)]))
    const [newest, oldest] = await Promise.all([
      setUp("newest", folder, tarballs, peers),
      setUp("lowest", folder, tarballs, lowestPeers)
    ])
    if (newest !== undefined) await exercise("newest", newest.dir)
    // Type-checking with skipLibCheck: false is the slow part: an identical tree is checked once.
    if (oldest !== undefined && oldest.installed === newest?.installed)
      console.log("  lowest: the same versions as newest (the newest published are the lowest allowed): checked once")
    else if (oldest !== undefined) await exercise("lowest", oldest.dir)
  } catch (error) {
    if (failures.length === 0) fail("consumer check", String(error))
  } finally {
    if (keep) console.log(`kept ${folder}`)
    else rmSync(folder, { recursive: true, force: true })
  }
  if (failures.length === 0) console.log(`consumer check passed in ${seconds()}`)
  else {
    console.log(`consumer check FAILED in ${seconds()} (${failures.length}):`)
    for (const failure of failures) console.log(`  - ${failure}`)
    process.exitCode = 1
  }
}

await main()
