/**
 * The tour end to end (`npm start` runs it): offline with its scripted
 * model, against a stand-in for a real OpenAI-compatible endpoint whose
 * script is not the tour's, and against an endpoint that refuses every call
 * (the tour must then exit 1).
 */
import { execFile } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { ChatCompletionsServer } from "@rolecraft/testing"
import { Effect } from "effect"

const root = new URL("..", import.meta.url).pathname

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the tour with `env` added to a copy of this environment without any OPENAI_* variable. */
const tour = (env: Readonly<Record<string, string>>): Promise<Run> => {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("OPENAI_")))
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["examples/tour/main.ts"],
      { cwd: root, env: { ...base, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resolve({ code, stdout, stderr })
      }
    )
  })
}

const secret = "tour-test-secret-4f1c9b"

const steps: ReadonlyArray<readonly [label: string, action: string, type: string, outcome: string]> = [
  ["local action", "nights", "local", "ok"],
  ["GET, placeholder", "forecast", "webService", "ok"],
  ["GET, query", "searchHotels", "webService", "ok"],
  ["POST, JSON body", "quote", "webService", "ok"],
  ["llm action", "packingTip", "llm", "ok"],
  ["MCP tool (filesystem)", "files", "mcpTool", "ok"],
  ["MCP tool (everything)", "toolbox", "mcpTool", "ok"],
  ["approval: refused", "book", "webService", "APPROVAL (missing)"],
  ["approval: approved", "agent.approvals.approve", "approval", "ok"],
  ["approval: run", "book", "webService", "ok"],
  ["approval: replay", "book", "webService", "APPROVAL (used)"],
  ["fallback", "liveWeather", "webService", "ok"],
  ["response: 404", "forecast", "webService", "EXECUTION (404)"],
  ["response: invalid", "quote", "webService", "VALIDATION"]
]

/** The summary row of a step, as a pattern: label, action, type, outcome, a time, the mark. */
const row = (index: number, [label, action, type, outcome]: (typeof steps)[number], mark: "✓" | "✗") =>
  new RegExp(
    `^\\s*${index}\\s+${literal(label)}\\s+${literal(action)}\\s+${type}\\s+${literal(outcome)}\\s+[\\d.]+ m?s\\s+${mark}$`,
    "m"
  )

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

describe("the tour", () => {
  it("offline: every step does what it must, the transcript says so, exit code 0, the secret never printed", async () => {
    const { code, stdout, stderr } = await tour({ TOUR_API_KEY: secret })
    assert.strictEqual(code, 0, `${stdout}\n${stderr}`)
    assert.include(stdout, "model    offline scripted model (no OPENAI_API_KEY)")
    assert.include(stdout, "Model: offline scripted model (no OPENAI_API_KEY).")
    assert.include(stdout, "bearer token from TOUR_API_KEY")
    assert.match(
      stdout,
      /server-filesystem over stdio, on the folder: secure-filesystem-server [\d.]+, 14 tools: read_file/
    )
    assert.match(stdout, /server-everything over stdio: mcp-servers\/everything [\d.]+, 13 tools: echo/)
    assert.include(stdout, "liveWeather (webService, own, overrides Weather)")
    for (const [i, step] of steps.entries()) assert.match(stdout, row(i + 1, step, "✓"))
    assert.include(stdout, `${steps.length} steps, ${steps.length} did what they must`)

    // What the steps printed: results, categories and messages (wrapped lines joined).
    const flat = stdout.replace(/\n {17}/g, " ")
    assert.match(stdout, /✓ +[\d.]+ m?s {2}3\n/)
    assert.include(stdout, '"total":360,"currency":"EUR"')
    assert.include(stdout, '"For Lisbon in May, pack light layers')
    assert.match(stdout, /usage: \d+ tokens \(\d+ in, \d+ out\)/)
    assert.include(stdout, '"The sum of 120.5 and 79.5 is 200."')
    assert.include(
      flat,
      "APPROVAL (missing): book requires approval (Books a room and charges the card): no approval token was given"
    )
    assert.include(
      flat,
      "APPROVAL (used): book requires approval (Books a room and charges the card): the approval token has already been used"
    )
    assert.include(stdout, "the API recorded 1 booking")
    assert.include(stdout, "the radar route was called 2 times (1 attempt + 1 retry)")
    assert.include(stdout, '"source":"fallback","because":"TRANSIENT"')
    assert.include(flat, "EXECUTION (404): forecast: GET /v1/forecast/Atlantis was refused with status 404")
    assert.include(flat, '"authorization":"Bearer [REDACTED]"')
    assert.include(stdout, 'VALIDATION: Invalid arguments for quote: nights: expected an integer, got "three"')
    assert.include(stdout, '"approvalToken":"‹redacted›"')

    assert.notInclude(stdout + stderr, secret)
    assert.notInclude(stdout, "\x1b[", "no terminal escapes when stdout is not a terminal")
  })

  it.live(
    "against a stand-in for a real endpoint (its own script): only what must hold is checked, exit code 0",
    () =>
      Effect.gen(function* () {
        const server = yield* ChatCompletionsServer.make([
          ChatCompletionsServer.reply("Bring an umbrella.", {
            usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 }
          })
        ])
        const apiKey = "sk-stand-in-0123456789"
        const { code, stdout, stderr } = yield* Effect.promise(() =>
          tour({ OPENAI_API_KEY: apiKey, OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: "stand-in-model" })
        )
        assert.strictEqual(code, 0, `${stdout}\n${stderr}`)
        assert.include(stdout, `model    stand-in-model at ${server.baseURL} (OPENAI_API_KEY set)`)
        assert.include(stdout, "An llm action answered by the real model")
        assert.include(stdout, '"Bring an umbrella."')
        assert.include(stdout, "usage: 34 tokens (30 in, 4 out)")
        for (const [i, step] of steps.entries()) assert.match(stdout, row(i + 1, step, "✓"))
        assert.notInclude(stdout + stderr, apiKey)

        const requests = yield* server.requests
        assert.strictEqual(requests.length, 1)
        const llm = requests[0]!
        assert.strictEqual(llm.headers.authorization, `Bearer ${apiKey}`)
        assert.strictEqual((llm.body as { model?: string }).model, "stand-in-model")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "a step that does not do what it must (the endpoint refuses): the summary marks it and the exit code is 1",
    () =>
      Effect.gen(function* () {
        const server = yield* ChatCompletionsServer.make(
          Array.from({ length: 8 }, () => ChatCompletionsServer.error(401, { message: "Incorrect API key provided" }))
        )
        const { code, stdout } = yield* Effect.promise(() =>
          tour({ OPENAI_API_KEY: "sk-wrong", OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: "stand-in-model" })
        )
        assert.strictEqual(code, 1)
        assert.match(stdout, /EXECUTION \(401\): packingTip: .*Incorrect API key provided/)
        assert.include(stdout, "did not do what it must: expected success, got EXECUTION")
        assert.match(stdout, row(5, ["llm action", "packingTip", "llm", "EXECUTION (401)"], "✗"))
        assert.match(stdout, row(1, steps[0]!, "✓"))
        assert.match(stdout, new RegExp(`${steps.length} steps, ${steps.length - 1} did what they must, 1 did not`))
      }).pipe(Effect.scoped),
    60_000
  )
})
