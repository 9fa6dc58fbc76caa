/**
 * Every example runs with `node examples/<name>.ts` and prints what it says it does. The examples run from their
 * sources (`--conditions=@rolecraft/source`), never from `dist/`, so a test never runs a stale build.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const run = promisify(execFile)
const node = (file: string) =>
  run(process.execPath, ["--conditions=@rolecraft/source", file], { cwd: new URL("..", import.meta.url).pathname })

describe("examples", () => {
  it("capabilities.ts: the strict editor's local summarize overrides the llm one and runs", async () => {
    const { stdout } = await node("examples/capabilities.ts")
    assert.include(stdout, "summarize: llm, from capability Summarizer")
    assert.include(stdout, "translate: llm, from capability Translator")
    assert.include(stdout, "summarize: local, from role strict-editor")
    assert.include(
      stdout,
      'strict-editor summarize -> "Rolecraft builds agents out of roles and actions, in functio..."'
    )
  })

  it("local-actions.ts: nights, a failure in an ActionResponse, and a retried flaky action", async () => {
    const { stdout } = await node("examples/local-actions.ts")
    assert.include(stdout, "nights(2026-11-02, 2026-11-05) -> 3")
    assert.include(stdout, "nights(checkIn only) -> VALIDATION: Invalid arguments for nights: checkOut: missing")
    assert.include(stdout, 'availability(h-42) -> {"hotelId":"h-42","roomsLeft":4,"attempts":3}')
  })
})

describe("examples: policies", () => {
  it("local-actions.ts: book needs an approved token, once, for its own arguments; charge is guarded and contracted", async () => {
    const { stdout } = await node("examples/local-actions.ts")
    const lines = [
      "book without a token -> APPROVAL (missing): book requires approval (Books and charges a hotel): no approval token was given",
      "alice approves the pending token -> approved",
      'book with the approved token -> "booked h-42 from 2026-11-02"',
      "book again with the same token -> APPROVAL (used): book requires approval (Books and charges a hotel): the approval token has already been used",
      "book with another date on an approved token -> APPROVAL (arguments): book requires approval (Books and charges a hotel): the approval token was issued for other arguments",
      'charge(400, "hote…") -> {"charged":400,"left":600}',
      'charge(50, "card…") -> GUARDRAIL: charge: input guardrail: memo matches the blocked pattern /\\b\\d{13,16}\\b/',
      'charge(700, "flig…") -> CONTRACT: charge: precondition failed: the amount fits the budget',
      'charge(600, "flig…") -> {"charged":600,"left":0}'
    ]
    for (const line of lines) assert.include(stdout, line)
    assert.notInclude(stdout, "4111111111111111")
  })
})

describe("examples: webService", () => {
  it("web-service.ts: the seeds' forecast and temperature run against a local service; a 404 is EXECUTION", async () => {
    const { stdout } = await node("examples/web-service.ts")
    assert.include(stdout, 'forecast(São Paulo) -> {"city":"São Paulo","days":["storms","sunny","sunny"]}')
    assert.include(stdout, "temperature(Vienna) -> Vienna: 21")
    assert.match(
      stdout,
      /forecast\(Atlantis\) -> EXECUTION: forecast: GET http:\/\/127\.0\.0\.1:\d+\/v1\/forecast\/Atlantis was refused with status 404: \{"error":"no forecast for Atlantis"\}/
    )
  })
})

describe("examples (MCP)", () => {
  it("mcp-tools.ts: a currencyTools-style mcpTool action runs server-everything's tools through the agent", async () => {
    const { stdout } = await node("examples/mcp-tools.ts")
    assert.include(stdout, 'echo -> "Echo: bonjour"')
    assert.include(stdout, 'get-sum -> "The sum of 120.5 and 79.5 is 200."')
    assert.match(stdout, /get-tiny-image -> \[\{"type":"text",.*"text":"\[image image\/png, 4 KB\]"\}/)
    assert.include(
      stdout,
      "get-env -> NOT_FOUND: currencyTools: the MCP server has no tool named get-env that this action allows; available: echo, get-sum, get-tiny-image"
    )
  })
})

describe("examples (llm)", () => {
  it("llm-actions.ts: packingTip retried after a 429, summarize and translate, against the local endpoint", async () => {
    const { stdout } = await node("examples/llm-actions.ts")
    assert.include(
      stdout,
      'packingTip -> "Pack warm wool layers and a waterproof shell. Oslo in November is cold and wet." [55 tokens]'
    )
    assert.include(
      stdout,
      'summarize -> "Rolecraft builds AI agents from roles and actions in functional Effect code." [67 tokens]'
    )
    assert.include(stdout, 'translate -> "Bonjour tout le monde" [34 tokens]')
    assert.include(stdout, "The endpoint saw 4 requests")
    assert.include(stdout, "translate was sent to model gpt-4.1-mini with:")
    assert.include(
      stdout,
      '"content": "Translate the text to the target language\\n\\nInput:\\ntext: Hello world\\ntargetLanguage: French"'
    )
  })
})

describe("examples (chat)", () => {
  it("chat.ts: one turn calls a local action, a webService and server-everything's echo, then answers", async () => {
    const { stdout } = await node("examples/chat.ts")
    assert.strictEqual(
      stdout,
      [
        "user: Plan three nights in Vienna from 2 November 2026.",
        'tool call nights({"checkIn":"2026-11-02","checkOut":"2026-11-05"})',
        "  -> 3",
        'tool call forecast({"city":"Vienna"})',
        '  -> {"city":"Vienna","days":["sunny","cloudy","rain"]}',
        'tool call everything_echo({"message":"Vienna booked"})',
        "  -> Echo: Vienna booked",
        "assistant: Three nights in Vienna: sunny, then cloudy, then rain. Pack an umbrella.",
        "",
        "Tools offered: nights, forecast, everything_echo",
        "2 model calls, 622 tokens.",
        ""
      ].join("\n")
    )
  })
})

describe("examples (a model per agent)", () => {
  it("two-models.ts: triage and the specialist each send their requests to their own endpoint", async () => {
    const { stdout } = await node("examples/two-models.ts")
    assert.strictEqual(
      stdout,
      [
        "1. triage answered: The second charge is a card hold; it drops within three days.",
        "2. specialist answered: Your refund of 80 EUR was sent on Monday; banks take up to five days.",
        "endpoint A (triage): 3 requests, models triage-mini",
        "endpoint B (specialist): 2 requests, models specialist-large",
        ""
      ].join("\n")
    )
  })
})

describe("examples (effect/ai)", () => {
  it("effect-ai.ts: an effect/ai model runs a chat turn, and an effect/ai Chat drives the role's actions", async () => {
    const { stdout } = await node("examples/effect-ai.ts")
    assert.strictEqual(
      stdout,
      [
        "1. An effect/ai model runs a Rolecraft chat turn",
        '  book({"hotelId":"h-42","nights":3}) waits for approval: Books and charges a hotel',
        '  answer: Done: 3; "booked h-42 for 3 nights".',
        "  2 model calls, 104 tokens; booked: h-42",
        "2. An effect/ai Chat drives the role's actions",
        "  toolkit: nights, book",
        "  nights -> 3",
        "  approval requested for call_2; booked: none",
        '  approved -> answer: Done: 3; "booked h-42 for 3 nights".',
        "  booked: h-42",
        ""
      ].join("\n")
    )
  })
})

describe("examples (tracing)", () => {
  it("tracing.ts: a chat turn's GenAI span tree and Rolecraft's metrics, as a local OTLP collector received them", async () => {
    const { stdout } = await node("examples/tracing.ts")
    const chat = (reason: string, input: number, output: number) =>
      `    chat gpt-4.1-mini [client] gen_ai.operation.name="chat" gen_ai.provider.name="openai" gen_ai.request.model="gpt-4.1-mini" gen_ai.response.finish_reasons=["${reason}"] gen_ai.usage.input_tokens=${input} gen_ai.usage.output_tokens=${output}`
    const tool = (name: string) =>
      `    execute_tool ${name} [internal] gen_ai.operation.name="execute_tool" gen_ai.tool.name="${name}" gen_ai.tool.call.id="call_${name}"`
    assert.strictEqual(
      stdout,
      [
        "answer: Three nights for two: 540 EUR.",
        "",
        "spans received by the collector:",
        '  invoke_agent planner [internal] gen_ai.operation.name="invoke_agent" gen_ai.response.finish_reasons=["stop"] gen_ai.usage.input_tokens=320 gen_ai.usage.output_tokens=52',
        chat("tool_calls", 120, 40),
        tool("nights"),
        tool("quote"),
        chat("stop", 200, 12),
        "",
        "metrics received by the collector:",
        "  gen_ai.client.operation.duration",
        "  gen_ai.client.token.usage",
        "  rolecraft.action.calls",
        "  rolecraft.action.duration",
        ""
      ].join("\n")
    )
  })
})

describe("examples: MCP with OAuth", () => {
  it("mcp-oauth/main.ts: the agent authorizes with a local authorization server, refreshes, and a client without OAuth gets EXECUTION 401", async () => {
    const { stdout } = await node("examples/mcp-oauth/main.ts")
    assert.include(stdout, 'search_notes(roadmap) -> "2 notes match \\"roadmap\\": standup.md, roadmap.md"')
    assert.match(
      stdout,
      /authorized: 1 registration, 1 authorization, 1 token, resource http:\/\/127\.0\.0\.1:\d+\/mcp/
    )
    assert.include(stdout, 'after the token expired: search_notes(standup) -> "2 notes match \\"standup\\"')
    assert.include(stdout, "refreshed: 1 refresh, still 1 authorization")
    assert.match(
      stdout,
      /without OAuth -> EXECUTION: notes: MCP server notes \(http:\/\/127\.0\.0\.1:\d+\/mcp\) answered HTTP 401 Unauthorized/
    )
  })
})
