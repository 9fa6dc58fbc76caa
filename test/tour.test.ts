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
      ["--conditions=@rolecraft/source", "examples/tour/main.ts"],
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
  ["response: invalid", "quote", "webService", "VALIDATION"],
  ["chat turn", "agent.chat", "chat", "ok"],
  ["streamed turn", "agent.chatStream", "chat", "ok"],
  ["structured output", "agent.chat", "chat", "ok"]
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
    // 15: the client declares sampling and elicitation, so the server also offers the tools that ask for them.
    assert.match(stdout, /server-everything over stdio: mcp-servers\/everything [\d.]+, 15 tools: echo/)
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
    assert.include(stdout, "@rolecraft/durable, docs/durable.md")
    assert.include(stdout, '"Completed after 2 model calls, 3 tool calls"')
    assert.include(stdout, '→ nights (local) {"checkIn":"2026-05-12","checkOut":"2026-05-15"} ⇒ 3')
    assert.include(stdout, '→ searchHotels (webService) {"city":"Lisbon","maxPrice":"150"} ⇒ {"city":"Lisbon"')
    assert.match(stdout, /→ files_read_text_file \(mcpTool\) \{"path":"[^"]*trip-notes/)
    assert.include(flat, "answer: That is 3 nights. Hotels that fit: Casa Alfama (95 EUR a night), Belém River Inn")
    // The streamed turn: the tool call as it starts and is answered, then the text as it arrives.
    assert.include(stdout, "     → nights started\n     ← nights ✓ 3\n     ▸ That is 3 nights.\n")
    assert.include(stdout, '"Completed after 2 model calls, 4 text deltas"')
    // The structured turn: the strict null of the optional field is left out of the decoded output.
    assert.include(stdout, '{"city":"Lisbon","nights":3}')
    assert.include(stdout, `the model's answer: {"city":"Lisbon","nights":3,"cheapestHotel":null}`)

    assert.notInclude(stdout + stderr, secret)
    assert.notInclude(stdout, "\x1b[", "no terminal escapes when stdout is not a terminal")
    // A child process of Node on a shared machine: its start-up alone can take tens of seconds under load.
  }, 180_000)

  it.live(
    "against a stand-in for a real endpoint (its own script): only what must hold is checked, exit code 0",
    () =>
      Effect.gen(function* () {
        const usage = { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 }
        const server = yield* ChatCompletionsServer.make([
          // the llm step
          ChatCompletionsServer.reply("Bring an umbrella.", { usage }),
          // the chat turn: a tool that does not exist, broken JSON, a good call, and a booking (needs approval)
          ChatCompletionsServer.toolCalls(
            [
              { id: "c1", name: "launch_rocket", arguments: {} },
              { id: "c2", name: "nights", arguments: '{"checkIn": "2026-05-12"' },
              { id: "c3", name: "searchHotels", arguments: { city: "Lisbon" } },
              {
                id: "c4",
                name: "book",
                arguments: { hotelId: "lis-alfama", checkIn: "2026-05-12", nights: 3, guest: "Bo" }
              }
            ],
            { usage }
          ),
          ChatCompletionsServer.reply("Sorry, I could only search hotels.", { usage }),
          // the streamed turn
          ChatCompletionsServer.reply("Three nights, from the 12th to the 15th.", { usage }),
          // the structured turn
          ChatCompletionsServer.reply('{"city":"Lisbon","nights":3,"cheapestHotel":"Casa Alfama"}', { usage })
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
        assert.include(stdout, "The real model chooses its tools; every call it makes is answered, whatever it says")
        assert.include(stdout, '"Completed after 2 model calls, 4 tool calls"')
        assert.include(stdout, "usage: 68 tokens (60 in, 8 out)")
        assert.include(stdout, "→ launch_rocket (unknown tool) {} ⇒ ✗ NOT_FOUND: ")
        // Arguments that are not JSON go back to the model as {} (its answer quotes what was received).
        assert.include(stdout, "→ nights (local) {} ⇒ ✗ VALIDATION: arguments are not valid JSON")
        assert.match(stdout, /→ book \(webService\) \{"hotelId":"lis-alfama".* ⇒ ✗ APPROVAL: /)
        assert.include(stdout, '→ searchHotels (webService) {"city":"Lisbon"} ⇒ {"city":"Lisbon","hotels"')
        assert.include(stdout, "1 call needing approval rejected by the tour")
        assert.include(stdout, "answer: Sorry, I could only search hotels.")
        assert.include(stdout, "The API served 8 requests; 1 booking made.")
        assert.include(stdout, "     ▸ Three nights, from the 12th to the 15th.\n")
        assert.include(stdout, '"Completed after 1 model call, 8 text deltas"')
        assert.notInclude(stdout + stderr, apiKey)

        // What the endpoint saw: the key, the model, and one answer for each of the four calls.
        const requests = yield* server.requests
        assert.strictEqual(requests.length, 5)
        assert.strictEqual((requests[3]!.body as { stream?: boolean }).stream, true)
        assert.deepStrictEqual(
          (requests[4]!.body as { response_format?: { json_schema?: { name?: string; strict?: boolean } } })
            .response_format?.json_schema?.name,
          "output"
        )
        assert.include(stdout, '{"city":"Lisbon","nights":3,"cheapestHotel":"Casa Alfama"}')
        for (const request of requests) {
          assert.strictEqual(request.headers.authorization, `Bearer ${apiKey}`)
          assert.strictEqual((request.body as { model?: string }).model, "stand-in-model")
        }
        const last = requests[2]!.body as { messages: ReadonlyArray<{ role: string; tool_call_id?: string }> }
        const answered = last.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)
        assert.deepStrictEqual([...answered].sort(), ["c1", "c2", "c3", "c4"])
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
        assert.match(stdout, /EXECUTION: chat: .*Incorrect API key provided/)
        assert.match(stdout, row(15, ["chat turn", "agent.chat", "chat", "EXECUTION"], "✗"))
        assert.match(stdout, row(16, ["streamed turn", "agent.chatStream", "chat", "EXECUTION"], "✗"))
        assert.match(stdout, row(17, ["structured output", "agent.chat", "chat", "EXECUTION"], "✗"))
        assert.match(stdout, new RegExp(`${steps.length} steps, ${steps.length - 4} did what they must, 4 did not`))
      }).pipe(Effect.scoped),
    60_000
  )
})
